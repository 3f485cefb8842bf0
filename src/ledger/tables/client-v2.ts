import { CAPTURE_TABLES } from "./captures.ts";
import { GENAI_TABLES } from "./genai.ts";
import { USAGE_TABLES } from "./usage.ts";

/**
 * Schema v2, `cline.client` on every series (issue 23): `client` joins the UNIQUE key of each
 * running-series table (usage, tool, tool outcome, GenAI, capture), and the two tables whose
 * series are grouped at read time (captures, compactions) get the column. GenAI rows also get
 * their session's `project` (not in the key: it gives them `vcs.*`, issue 24).
 *
 * SQLite cannot change a UNIQUE constraint in place, so each series table is rebuilt: the old one
 * renamed away first (a foreign key to it, capture_buckets', follows the rename and is rebuilt
 * too), the new one created from its baseline DDL plus the column, every row copied with its id
 * (keyset pages and capture_buckets refer to ids) and client '' (an existing series keeps its
 * attribute set: a cumulative series re-keyed under a client would count twice for a TTL), the old
 * one dropped. The series tables have no index of their own besides the UNIQUE one. migrate.ts
 * runs it in the one transaction of the upgrade.
 */

/** A baseline `CREATE TABLE <name> (...)` statement, as the baseline DDL has it. */
function baselineTable(ddl: string, name: string): string {
  const m = new RegExp(`CREATE TABLE ${name} \\([\\s\\S]*?\\n  \\) STRICT[^;]*;`).exec(ddl);
  if (m === null) throw new Error(`no CREATE TABLE ${name} in the baseline`);
  return m[0];
}

/** The baseline table with `columns` added last and `client` appended to its UNIQUE key. */
function withClient(ddl: string, name: string, columns: readonly string[]): string {
  const table = baselineTable(ddl, name);
  const keyed = table.replace(
    /\n(\s+)UNIQUE \(([^)]*)\)/,
    (_m, indent: string, key: string) =>
      `\n${columns.map((c) => `${indent}${c} TEXT NOT NULL DEFAULT '',`).join("\n")}\n${indent}UNIQUE (${key}, client)`,
  );
  if (keyed === table) throw new Error(`no UNIQUE key in the baseline ${name}`);
  return keyed;
}

/** Renames `name` away, creates `create`, copies the rows (the new columns take their default). */
function rebuild(name: string, create: string, added: number): string {
  const defaults = Array.from({ length: added }, () => ", ''").join("");
  return `
  ALTER TABLE ${name} RENAME TO ${name}_v1;
  ${create}
  INSERT INTO ${name} SELECT *${defaults} FROM ${name}_v1;`;
}

const CLIENT = ["client"];

export const CLIENT_SERIES_V2 = [
  rebuild("usage_series", withClient(USAGE_TABLES, "usage_series", CLIENT), 1),
  rebuild("tool_series", withClient(USAGE_TABLES, "tool_series", CLIENT), 1),
  rebuild("tool_outcome_series", withClient(USAGE_TABLES, "tool_outcome_series", CLIENT), 1),
  rebuild("genai_rows", withClient(GENAI_TABLES, "genai_rows", ["client", "project"]), 2),
  rebuild("capture_series", withClient(CAPTURE_TABLES, "capture_series", CLIENT), 1),
  // Its foreign key followed the rename to capture_series_v1: rebuilt to point at the new table.
  rebuild("capture_buckets", baselineTable(CAPTURE_TABLES, "capture_buckets"), 0),
  `
  DROP TABLE capture_buckets_v1;
  DROP TABLE capture_series_v1;
  DROP TABLE genai_rows_v1;
  DROP TABLE tool_outcome_series_v1;
  DROP TABLE tool_series_v1;
  DROP TABLE usage_series_v1;
  -- Grouped at read time: the column is enough (rows from before: '').
  ALTER TABLE captures ADD COLUMN client TEXT NOT NULL DEFAULT '';
  ALTER TABLE compactions ADD COLUMN client TEXT NOT NULL DEFAULT '';
`,
].join("\n");
