/**
 * Decoding the index: the `sessions` columns read by name from an image or a private copy (an allow-list:
 * `metadata_json` and `prompt` are never selected) into IndexRows.
 */
import { createRequire } from "node:module";
import type Database from "better-sqlite3";

/** One row of Cline's `sessions` table, as the discovery uses it. */
export interface IndexRow {
  readonly sessionId: string;
  /** As stored (absolute normally); null when the column is absent or NULL. */
  readonly messagesPath: string | null;
  readonly cwd: string | null;
  readonly isSubagent: boolean;
  readonly parentSessionId: string | null;
  readonly agentId: string | null;
  readonly provider: string | null;
  readonly model: string | null;
  readonly startedAt: string | null;
  /** The writer's label (`cli`, `vscode`, ...), raw: mapped to `cline.client` by client.ts. */
  readonly source: string | null;
}

/**
 * better-sqlite3 is required when an index is there to read, not at import: `paths` and a
 * discovery of a machine where Cline never ran load none of its 14 modules.
 */
export const requireModule = createRequire(import.meta.url);

/**
 * The index columns we read, by name. `metadata_json` and `prompt` are deliberately absent: they
 * hold running usage totals and prompt text, which must never be read.
 */
export const TEXT_COLUMNS = {
  messagesPath: "messages_path",
  cwd: "cwd",
  parentSessionId: "parent_session_id",
  agentId: "agent_id",
  provider: "provider",
  model: "model",
  startedAt: "started_at",
  source: "source",
} as const;

export const SESSION_ID_COLUMN = "session_id";

export const IS_SUBAGENT_COLUMN = "is_subagent";

/** Every column name the reader may select; exported so tests can pin the allow-list. */
export const SELECTED_COLUMNS: readonly string[] = [
  SESSION_ID_COLUMN,
  IS_SUBAGENT_COLUMN,
  ...Object.values(TEXT_COLUMNS),
];

export function textOf(v: unknown): string | null {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "bigint") return String(v);
  return null;
}

export function flagOf(v: unknown): boolean {
  if (typeof v === "number") return v !== 0;
  if (typeof v === "bigint") return v !== 0n;
  if (typeof v === "string") return v !== "" && v !== "0";
  return false;
}

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export type QueryOutcome =
  | { readonly kind: "rows"; readonly rows: IndexRow[]; readonly skipped: number }
  | { readonly kind: "no-table"; readonly why: string };

/**
 * A read-only connection on `image`: a rollback-mode database image in memory (SQLite keeps its
 * own copy of the bytes, so the caller's buffers may be dropped once this returns), or the path of
 * a rollback-mode private copy (index-copy.ts; such a connection makes no -wal or -shm). Throws
 * SqliteError on a damaged image.
 */
export function openImage(image: Buffer | string): Database.Database {
  const Sqlite = requireModule("better-sqlite3") as typeof Database;
  const conn = new Sqlite(image, { readonly: true, fileMustExist: true });
  try {
    conn.pragma("query_only = 1");
  } catch (e) {
    conn.close();
    throw e;
  }
  return conn;
}

/**
 * Runs the index query on `conn` (openImage; the caller closes it). The rows are read one at a
 * time as arrays (`raw().iterate()`), not as one array of 10-field objects beside the IndexRows,
 * and a project, model, provider or client repeated over thousands of sessions is one string, as
 * the stored read's decode does (index-cache.ts): at 30,000 sessions the read's peak was +111 MB.
 * Throws SqliteError on a damaged image.
 */
export function queryIndex(conn: Database.Database): QueryOutcome {
  const kind = conn
    .prepare("SELECT type FROM sqlite_schema WHERE name = 'sessions' COLLATE NOCASE")
    .pluck()
    .get();
  if (kind !== "table") {
    return {
      kind: "no-table",
      why: kind === undefined ? "has no sessions table" : `has sessions as a ${kind}`,
    };
  }
  const present = new Set(
    (conn.prepare("SELECT name FROM pragma_table_info('sessions')").pluck().all() as unknown[])
      .filter((n): n is string => typeof n === "string")
      .map((n) => n.toLowerCase()),
  );
  if (!present.has(SESSION_ID_COLUMN))
    return { kind: "no-table", why: "has a sessions table without session_id" };

  // Every selected column by position; an absent one reads as null (-1).
  const wanted = SELECTED_COLUMNS.filter((c) => present.has(c));
  const at = (c: string): number => wanted.indexOf(c);
  const col = {
    sessionId: at(SESSION_ID_COLUMN),
    messagesPath: at(TEXT_COLUMNS.messagesPath),
    cwd: at(TEXT_COLUMNS.cwd),
    isSubagent: at(IS_SUBAGENT_COLUMN),
    parentSessionId: at(TEXT_COLUMNS.parentSessionId),
    agentId: at(TEXT_COLUMNS.agentId),
    provider: at(TEXT_COLUMNS.provider),
    model: at(TEXT_COLUMNS.model),
    startedAt: at(TEXT_COLUMNS.startedAt),
    source: at(TEXT_COLUMNS.source),
  };
  const shared = new Map<string, string>();
  const one = (v: string | null): string | null => {
    if (v === null) return null;
    const s = shared.get(v);
    if (s !== undefined) return s;
    shared.set(v, v);
    return v;
  };
  const text = (r: unknown[], i: number): string | null => (i < 0 ? null : textOf(r[i]));
  const sharedText = (r: unknown[], i: number): string | null => one(text(r, i));
  const sql = `SELECT ${wanted.map(quoteIdent).join(", ")} FROM sessions ORDER BY ${quoteIdent(SESSION_ID_COLUMN)}`;
  const rows: IndexRow[] = [];
  let skipped = 0;
  for (const r of conn.prepare(sql).raw().iterate() as IterableIterator<unknown[]>) {
    const sessionId = text(r, col.sessionId);
    if (sessionId === null || sessionId === "") {
      skipped++;
      continue;
    }
    rows.push({
      sessionId,
      messagesPath: text(r, col.messagesPath),
      cwd: sharedText(r, col.cwd),
      isSubagent: col.isSubagent >= 0 && flagOf(r[col.isSubagent]),
      parentSessionId: sharedText(r, col.parentSessionId),
      agentId: text(r, col.agentId),
      provider: sharedText(r, col.provider),
      model: sharedText(r, col.model),
      startedAt: sharedText(r, col.startedAt),
      source: sharedText(r, col.source),
    });
  }
  return { kind: "rows", rows, skipped };
}
