/**
 * A ledger of an older schema version (MIGRATIONS[0..version) only) holding rows written by this
 * build's own code: `write` fills a current ledger, whose rows are then copied column by column
 * into the older tables (a column the older schema lacks is left out). As v1-ledger.ts, for any
 * version: the upgrade tests of a step from version `version`.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { LEDGER_FILE } from "../../src/ledger/ledger.ts";
import { migrate } from "../../src/ledger/migrate.ts";
import { MIGRATIONS } from "../../src/ledger/schema.ts";
import { columnsOf, tablesOf } from "./v1-ledger.ts";

/** `<dir>/v<version>`, a ledger of that version holding what `write(<dir>/source-v<version>)` wrote. */
export function ledgerAt(dir: string, version: number, write: (stateDir: string) => void): string {
  const source = join(dir, `source-v${version}`);
  mkdirSync(source);
  write(source);
  const target = join(dir, `v${version}`);
  mkdirSync(target, { mode: 0o700 });
  const path = join(target, LEDGER_FILE);
  const db = new Database(path);
  migrate(
    db,
    path,
    () => 1,
    () => "unused",
    MIGRATIONS.slice(0, version),
  );
  db.prepare("ATTACH DATABASE ? AS src").run(join(source, LEDGER_FILE));
  db.transaction(() => {
    for (const t of tablesOf(db)) {
      const cols = columnsOf(db, t).join(", ");
      db.exec(`DELETE FROM main.${t}; INSERT INTO main.${t} (${cols}) SELECT ${cols} FROM src.${t}`);
    }
  })();
  db.exec("DETACH DATABASE src");
  db.close();
  return target;
}
