/**
 * A ledger of schema v1 (the baseline DDL only, MIGRATIONS[0]) holding rows written by this
 * build's own code: `write` fills a current ledger, whose rows are then copied column by column
 * into the v1 tables. For the upgrade tests of every later schema step.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { LEDGER_FILE, Ledger } from "../../src/ledger/ledger.ts";
import { migrate } from "../../src/ledger/migrate.ts";
import { MIGRATIONS } from "../../src/ledger/schema.ts";
import { EDIT_FIELDS } from "../../src/ledger/tables/edit-packs-v6.ts";
import { editCallKeySql } from "../../src/ledger/tables/edits-narrow-v5.ts";

export const tablesOf = (db: Database.Database): string[] =>
  (
    db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid",
      )
      .all() as { name: string }[]
  ).map((r) => r.name);

export const columnsOf = (db: Database.Database, table: string): string[] =>
  (db.pragma(`table_info(${table})`) as { name: string }[]).map((c) => c.name);

/**
 * A column an older schema has and the current one dropped, as SQL over the current row (alias s):
 * what that schema held there (schema v5 dropped the edit's call key, derived from its edit key, and
 * its usage key, read by nothing).
 */
function dropped(table: string, column: string): string {
  if (table === "edits" && column === "call_key") return editCallKeySql("s");
  if (table === "edits" && column === "usage_key") return "''";
  throw new Error(`${table}.${column}: not in the current schema, and no older value for it is known`);
}

/**
 * An edit row's id in a schema before v6 (one row per edit), where the current ledger's `edits` is the
 * view of its packs (tables/edit-packs-v6.ts), whose `id` is the pack's: the edits numbered in pack
 * order, and within a pack in their signal order (then by key), as the rows were inserted.
 */
function packedId(db: Database.Database, table: string, column: string): string | undefined {
  if (table !== "edits" || column !== "id") return undefined;
  const view = db.prepare("SELECT 1 FROM src.sqlite_master WHERE type = 'view' AND name = 'edits'").get();
  return view === undefined ? undefined : "row_number() OVER (ORDER BY s.id, s.signal_seq, s.edit_key)";
}

/**
 * A table an older schema has and the current one dropped, as a subquery over the current tables
 * (alias s) with that table's columns: schema v8 dropped `edit_keys` (an edit kept once by its call's
 * row, tables/edit-call-sums-v8.ts), whose rows are the packs' elements.
 */
function droppedTable(table: string): string | undefined {
  if (table !== "edit_keys") return undefined;
  const el = (i: number) => `j.value ->> ${i}`;
  return `(SELECT ${el(EDIT_FIELDS.indexOf("edit_key"))} AS edit_key, p.id AS pack, j.key AS i,
      ${el(EDIT_FIELDS.indexOf("decision"))} AS decision, ${el(EDIT_FIELDS.indexOf("lines_added"))} AS lines_added,
      ${el(EDIT_FIELDS.indexOf("lines_removed"))} AS lines_removed, ${el(EDIT_FIELDS.indexOf("exact"))} AS exact
    FROM src.edit_packs p, json_each(p.edits) j)`;
}

/** `<dir>/v1`, a v1 ledger holding what `write(<dir>/source)` wrote; returns its state dir. */
export function v1Ledger(dir: string, write: (stateDir: string) => void): string {
  return ledgerAtVersion(dir, write, 1);
}

/**
 * `<dir>/v<version>`, a ledger of that schema (MIGRATIONS up to it) holding what
 * `write(<dir>/source)` wrote, every column it has copied; returns its state dir.
 */
export function ledgerAtVersion(dir: string, write: (stateDir: string) => void, version: number): string {
  const source = join(dir, "source");
  mkdirSync(source);
  write(source);
  // A build before v7 kept its series current at every commit: fold this build's before the copy.
  const folder = Ledger.open(source);
  folder.foldSeries();
  folder.close();
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
      const cols = columnsOf(db, t);
      const derived = droppedTable(t);
      const have = new Set(
        derived !== undefined
          ? cols
          : (db.pragma(`src.table_info(${t})`) as { name: string }[]).map((c) => c.name),
      );
      const values = cols.map((c) => packedId(db, t, c) ?? (have.has(c) ? c : dropped(t, c)));
      db.exec(
        `DELETE FROM main.${t}; INSERT INTO main.${t} (${cols.join(", ")}) SELECT ${values.join(", ")} FROM ${derived ?? `src.${t}`} s`,
      );
    }
  })();
  db.exec("DETACH DATABASE src");
  db.close();
  return target;
}
