import { closeSync, openSync, writeSync } from "node:fs";
import Database from "better-sqlite3";

/**
 * Damages an index's pages of a closed SQLite file behind SQLite's back (0xff over the root
 * page's content, after its checkpoint): the header still reads fine, only a full check sees it.
 */
export function damageIndex(file: string, index: string): void {
  const db = new Database(file);
  const root = (
    db.prepare("SELECT rootpage FROM sqlite_master WHERE name = ?").get(index) as { rootpage: number }
  ).rootpage;
  const pageSize = db.pragma("page_size", { simple: true }) as number;
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  const f = openSync(file, "r+");
  writeSync(f, Buffer.alloc(pageSize, 0xff), 0, pageSize, (root - 1) * pageSize + 100);
  closeSync(f);
}
