/**
 * Decoding the index: the `sessions` columns read by name from an in-memory image (an allow-list:
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

/** Runs the index query against an in-memory image. Throws SqliteError on a damaged image. */
export function queryImage(image: Buffer): QueryOutcome {
  const Sqlite = requireModule("better-sqlite3") as typeof Database;
  const conn = new Sqlite(image, { readonly: true });
  try {
    conn.pragma("query_only = 1");
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

    const wanted = SELECTED_COLUMNS.filter((c) => present.has(c));
    const sql = `SELECT ${wanted.map(quoteIdent).join(", ")} FROM sessions ORDER BY ${quoteIdent(SESSION_ID_COLUMN)}`;
    const raw = conn.prepare(sql).all() as Record<string, unknown>[];
    const rows: IndexRow[] = [];
    let skipped = 0;
    for (const r of raw) {
      const sessionId = textOf(r[SESSION_ID_COLUMN]);
      if (sessionId === null || sessionId === "") {
        skipped++;
        continue;
      }
      rows.push({
        sessionId,
        messagesPath: textOf(r[TEXT_COLUMNS.messagesPath]),
        cwd: textOf(r[TEXT_COLUMNS.cwd]),
        isSubagent: flagOf(r[IS_SUBAGENT_COLUMN]),
        parentSessionId: textOf(r[TEXT_COLUMNS.parentSessionId]),
        agentId: textOf(r[TEXT_COLUMNS.agentId]),
        provider: textOf(r[TEXT_COLUMNS.provider]),
        model: textOf(r[TEXT_COLUMNS.model]),
        startedAt: textOf(r[TEXT_COLUMNS.startedAt]),
        source: textOf(r[TEXT_COLUMNS.source]),
      });
    }
    return { kind: "rows", rows, skipped };
  } finally {
    conn.close();
  }
}
