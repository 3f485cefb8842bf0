import type Database from "better-sqlite3";
import { LedgerError } from "./ledger-error.ts";
import { LEDGER_APPLICATION_ID, MIGRATIONS } from "./schema.ts";

/**
 * The schema version of an opened ledger: 0 while it is being created (empty), else its
 * user_version. Refuses, with the fix, a ledger this build cannot read: one newer than
 * `migrations`, or one written by a build before the baseline (its own numbering, no application id).
 */
export function ledgerVersion(
  db: Database.Database,
  path: string,
  migrations: readonly string[] = MIGRATIONS,
): number {
  const version = db.pragma("user_version", { simple: true }) as number;
  if (version === 0) return 0;
  if (db.pragma("application_id", { simple: true }) !== LEDGER_APPLICATION_ID) {
    throw new LedgerError(
      `the ledger ${path} was written by an older, unreleased cline-otel (its schema ${version}); move it aside (mv ${path} ${path}.old) to start a new ledger, which re-reads all history from Cline's files`,
      "too-old",
    );
  }
  if (version > migrations.length) {
    throw new LedgerError(
      `the ledger ${path} has schema version ${version}, newer than this cline-otel understands (${migrations.length}); upgrade cline-otel`,
      "too-new",
    );
  }
  return version;
}

/**
 * Brings a writer's ledger to the last of `migrations`, all steps in one transaction; a new
 * ledger also gets its application id and the `meta` rows (instance id, creation, stream start).
 */
export function migrate(
  db: Database.Database,
  path: string,
  now: () => number,
  instanceId: () => string,
  migrations: readonly string[] = MIGRATIONS,
): void {
  const version = ledgerVersion(db, path, migrations);
  if (version === migrations.length) return;
  db.transaction(() => {
    for (let v = version; v < migrations.length; v++) db.exec(migrations[v] as string);
    if (version === 0) {
      const ms = now();
      const put = db.prepare("INSERT INTO meta (key, value) VALUES (@key, @value)");
      put.run({ key: "instance_id", value: instanceId() });
      put.run({ key: "created_ms", value: String(ms) });
      // Persisted so a restarted process continues the same cumulative streams.
      put.run({ key: "stream_start_ns", value: (BigInt(ms) * 1_000_000n).toString() });
      db.pragma(`application_id = ${LEDGER_APPLICATION_ID}`);
    }
    db.pragma(`user_version = ${migrations.length}`);
  })();
}
