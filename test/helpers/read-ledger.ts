/**
 * A ledger file opened read-only for `read`, closed after it whatever it throws: the tests' look at
 * what a commit or an upgrade left, without a writer's connection.
 */
import Database from "better-sqlite3";

export function readLedger<T>(path: string, read: (db: Database.Database) => T): T {
  const db = new Database(path, { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}
