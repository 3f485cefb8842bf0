/**
 * Series folded in SQL: the series rows that coincide once some key columns are left out (or
 * grouped by a function of their value) summed into one row per group, the cumulative TTL as a
 * HAVING on the group's newest times, read in keyset pages over the group key. So an export whose
 * series collapse (session id off, a non-injective project rendering) reads one page at a time,
 * never every row, and each group is read whole exactly once per pass (docs/design-export.md
 * "Folded series"). The ledger knows no attribute: it is given the columns to drop and a
 * deterministic function for one column (registered on the connection), nothing else.
 */
import type Database from "better-sqlite3";
import { ACTIVITY_SERIES_KEY, type ActivitySeriesRow } from "../delivered/activity.ts";
import { EDIT_SERIES_KEY, type EditSeriesRow } from "../delivered/edits.ts";
import type { GenaiSeriesRow } from "../genai/layout.ts";
import { DUR, histogramColumns, MAIN, OUT } from "../genai/layout.ts";
import { type DbRow, expand, liveParams as genaiLive } from "../genai/reads.ts";
import type { ToolOutcomeRow } from "../signals/tool-outcomes.ts";
import type { LiveFilter, ToolSeriesRow, UsageSeriesRow } from "./series.ts";

/** The key columns of each series table, in order: ONE list each (a new key column is one entry). */
export const USAGE_SERIES_KEY: readonly string[] = [
  "session_id",
  "agent",
  "project",
  "model",
  "provider",
  "client",
];
export const TOOL_SERIES_KEY: readonly string[] = [...USAGE_SERIES_KEY, "tool_name", "usage_known"];
export const OUTCOME_SERIES_KEY: readonly string[] = [...TOOL_SERIES_KEY, "outcome"];
// project is no part of a genai row's identity (it follows from its session) but the series' vcs.*
// attributes are derived from it, so a fold may group by it (FoldKey.tables.genai).
export const GENAI_SERIES_KEY: readonly string[] = [
  "session_id",
  "project",
  "model",
  "provider",
  "tool_name",
  "outcome",
  "client",
];

/** How one table's series fold: key columns left out, and at most one grouped by a function of its value. */
export interface TableFold {
  readonly drop: readonly string[];
  /** Deterministic; rows whose values map to the same string are one group. */
  readonly render?: { readonly column: string; readonly fn: (value: string) => string } | undefined;
}

/** How series fold: one rule for every table, unless a table has its own (its series carry other attributes). */
export interface FoldKey extends TableFold {
  readonly tables?: Partial<Record<keyof typeof FOLD_TABLES, TableFold>> | undefined;
}

/** The fold of one table under `key`. */
function tableFold(key: FoldKey, table: keyof typeof FOLD_TABLES): TableFold {
  return key.tables?.[table] ?? key;
}

/** A group key's values in key order: the position after a page (JSON in export_backfill). */
export type FoldCursor = readonly (string | number)[];

/** At most `limit` groups after `after` (undefined: from the first); limit -1: all of them. */
export interface FoldPage {
  readonly after: FoldCursor | undefined;
  readonly limit: number;
}

export type Folded<R> = R & { readonly key: FoldCursor };

const alias = (c: string): string => c.replace(/_(\w)/g, (_, x: string) => x.toUpperCase());

interface TableSpec {
  readonly table: string;
  readonly key: readonly string[];
  /** Aggregates of the value columns, aliased as the row type names them. */
  readonly totals: string;
  /** The TTL on the group's newest times (HAVING). */
  readonly live: string;
}

const LIVE = "MAX(last_event_ms) >= @eventSince OR MAX(updated_ms) >= @updatedSince";
const TIMES = "MIN(first_ms) AS firstMs, MAX(updated_ms) AS updatedMs, MAX(last_event_ms) AS lastEventMs";
const TOKENS =
  "SUM(input) AS input, SUM(output) AS output, SUM(cache_read) AS cacheRead, SUM(cache_write) AS cacheWrite";

/** Each histogram of a genai row summed bucket by bucket; min of mins, max of maxes. */
const GENAI_TOTALS = [MAIN, OUT, DUR]
  .flatMap((h) =>
    histogramColumns(h).map((c) => {
      const f =
        c.endsWith("min") || c.endsWith("first_ms")
          ? "MIN"
          : /(max|updated_ms|last_event_ms)$/.test(c)
            ? "MAX"
            : "SUM";
      return `${f}(${c}) AS ${c}`;
    }),
  )
  .join(", ");

export const FOLD_TABLES = {
  usage: {
    table: "usage_series",
    key: USAGE_SERIES_KEY,
    totals: `${TOKENS}, SUM(events) AS events, ${TIMES}`,
    live: LIVE,
  },
  tool: {
    table: "tool_series",
    key: TOOL_SERIES_KEY,
    totals: `SUM(calls) AS calls, ${TOKENS}, ${TIMES}`,
    live: LIVE,
  },
  outcome: {
    table: "tool_outcome_series",
    key: OUTCOME_SERIES_KEY,
    totals: `SUM(calls) AS calls, ${TIMES}`,
    live: LIVE,
  },
  edit: {
    table: "edit_series",
    key: EDIT_SERIES_KEY,
    totals: `SUM(edits) AS edits, SUM(lines_added) AS linesAdded, SUM(lines_removed) AS linesRemoved,
      SUM(inexact_edits) AS inexactEdits, SUM(inexact_lines_added) AS inexactLinesAdded,
      SUM(inexact_lines_removed) AS inexactLinesRemoved, ${TIMES}`,
    live: LIVE,
  },
  activity: {
    table: "activity_series",
    key: ACTIVITY_SERIES_KEY,
    totals: `SUM(amount) AS amount, SUM(records) AS records, ${TIMES}`,
    live: LIVE,
  },
  genai: {
    table: "genai_rows",
    key: GENAI_SERIES_KEY,
    totals: GENAI_TOTALS,
    live: [MAIN, OUT, DUR]
      .map(
        (h) => `MAX(${h.prefix}last_event_ms) >= @eventSince OR MAX(${h.prefix}updated_ms) >= @updatedSince`,
      )
      .join(" OR "),
  },
} as const satisfies Record<string, TableSpec>;

type TableName = keyof typeof FOLD_TABLES;

/**
 * The group columns of every table under `key` (a rendered one marked): what a recorded cursor's
 * values mean. A pass recorded under other columns (a key column added by a migration) starts over.
 */
export function foldColumns(key: FoldKey): string {
  return (Object.keys(FOLD_TABLES) as (keyof typeof FOLD_TABLES)[])
    .map((name) => {
      const k = tableFold(key, name);
      return FOLD_TABLES[name].key
        .filter((c) => !k.drop.includes(c))
        .map((c) => (k.render?.column === c ? `${c}*` : c))
        .join(",");
    })
    .join(";");
}

/** The grouped read of one table under one fold key (exported for the query-plan test). */
export function foldSql(spec: TableSpec, key: TableFold, fnName: string | undefined, after: boolean): string {
  const groups: string[] = [];
  const cols: string[] = [];
  for (const c of spec.key) {
    if (key.drop.includes(c)) {
      cols.push(`'' AS ${alias(c)}`);
    } else if (key.render?.column === c && fnName !== undefined) {
      groups.push(`${fnName}(${c})`);
      // Any member renders as the group does: it stands for the group's attributes.
      cols.push(`MIN(${c}) AS ${alias(c)}`);
    } else {
      groups.push(c);
      cols.push(`${c} AS ${alias(c)}`);
    }
  }
  const g = groups.join(", ");
  const where = after ? `WHERE (${g}) > (${groups.map((_, i) => `@k${i}`).join(", ")})` : "";
  return `SELECT ${groups.map((e, i) => `${e} AS k${i}`).join(", ")}, ${cols.join(", ")}, ${spec.totals}
    FROM ${spec.table} ${where} GROUP BY ${g} HAVING ${spec.live} ORDER BY ${g} LIMIT @limit`;
}

interface Prepared {
  readonly first: Database.Statement;
  readonly after: Database.Statement;
  readonly width: number;
}

type Raw = Record<string, unknown>;

export class SeriesFolds {
  /** Statements per fold key and table, prepared once (a producer keeps its key for its life). */
  private readonly prepared = new WeakMap<FoldKey, Map<TableName, Prepared>>();
  private readonly counts = new WeakMap<FoldKey, Database.Statement>();
  private readonly names = new WeakMap<(value: string) => string, string>();
  private registered = 0;

  constructor(private readonly db: Database.Database) {}

  *usage(f: LiveFilter, key: FoldKey, page: FoldPage): IterableIterator<Folded<UsageSeriesRow>> {
    yield* this.read("usage", f, key, page) as IterableIterator<Folded<UsageSeriesRow>>;
  }

  *tool(f: LiveFilter, key: FoldKey, page: FoldPage): IterableIterator<Folded<ToolSeriesRow>> {
    for (const r of this.read("tool", f, key, page))
      yield { ...r, usageKnown: r.usageKnown === 1 } as unknown as Folded<ToolSeriesRow>;
  }

  *outcome(f: LiveFilter, key: FoldKey, page: FoldPage): IterableIterator<Folded<ToolOutcomeRow>> {
    for (const r of this.read("outcome", f, key, page))
      yield { ...r, usageKnown: r.usageKnown === 1 } as never;
  }

  *edit(f: LiveFilter, key: FoldKey, page: FoldPage): IterableIterator<Folded<EditSeriesRow>> {
    yield* this.read("edit", f, key, page) as IterableIterator<Folded<EditSeriesRow>>;
  }

  *activity(f: LiveFilter, key: FoldKey, page: FoldPage): IterableIterator<Folded<ActivitySeriesRow>> {
    yield* this.read("activity", f, key, page) as IterableIterator<Folded<ActivitySeriesRow>>;
  }

  /**
   * GenAI series of whole groups (a request group holds up to three series) while at most
   * `limit` series (-1: no limit), the key of the last group taken, and `done` once none is left.
   */
  genai(
    f: LiveFilter,
    key: FoldKey,
    page: FoldPage,
  ): { readonly rows: GenaiSeriesRow[]; readonly last: FoldCursor | undefined; readonly done: boolean } {
    const got = [...this.read("genai", f, key, page)];
    const live = genaiLive(f);
    const rows: GenaiSeriesRow[] = [];
    let last = page.after;
    let taken = 0;
    for (const r of got) {
      const series = expand(r as unknown as DbRow, live);
      if (page.limit >= 0 && rows.length + series.length > page.limit) break;
      rows.push(...series);
      last = r.key;
      taken++;
    }
    return { rows, last, done: taken === got.length && (page.limit < 0 || got.length < page.limit) };
  }

  /** How many usage and tool groups the filter keeps (a paged export's progress). */
  count(f: LiveFilter, key: FoldKey): number {
    let st = this.counts.get(key);
    if (st === undefined) {
      const n = (name: "usage" | "tool") => {
        const k = tableFold(key, name);
        const sql = foldSql(FOLD_TABLES[name], k, this.fnName(k), false);
        return `(SELECT COUNT(*) FROM (${sql.replace(/ LIMIT @limit$/, "")}))`;
      };
      st = this.db.prepare(`SELECT ${n("usage")} + ${n("tool")} AS n`);
      this.counts.set(key, st);
    }
    return (st.get(genaiLive(f)) as { n: number }).n;
  }

  private *read(
    table: TableName,
    f: LiveFilter,
    key: FoldKey,
    page: FoldPage,
  ): IterableIterator<Raw & { key: FoldCursor }> {
    const p = this.statements(key, table);
    const params: Record<string, unknown> = { ...genaiLive(f), limit: page.limit };
    if (page.after !== undefined) {
      if (page.after.length !== p.width)
        throw new Error(`a fold cursor of ${page.after.length} values for ${p.width} key columns`);
      page.after.forEach((v, i) => {
        params[`k${i}`] = v;
      });
    }
    const st = page.after === undefined ? p.first : p.after;
    for (const r of st.iterate(params) as IterableIterator<Raw>) {
      const k: (string | number)[] = [];
      for (let i = 0; i < p.width; i++) k.push(r[`k${i}`] as string | number);
      yield { ...r, key: k };
    }
  }

  private statements(key: FoldKey, table: TableName): Prepared {
    let byTable = this.prepared.get(key);
    if (byTable === undefined) {
      byTable = new Map();
      this.prepared.set(key, byTable);
    }
    let p = byTable.get(table);
    if (p === undefined) {
      const spec = FOLD_TABLES[table];
      const k = tableFold(key, table);
      const fn = spec.key.includes(k.render?.column ?? "") ? this.fnName(k) : undefined;
      const width = spec.key.filter((c) => !k.drop.includes(c)).length;
      p = {
        first: this.db.prepare(foldSql(spec, k, fn, false)),
        after: this.db.prepare(foldSql(spec, k, fn, true)),
        width,
      };
      byTable.set(table, p);
    }
    return p;
  }

  /** The SQL name of the key's render function, registered on first use (deterministic). */
  private fnName(key: TableFold): string | undefined {
    const r = key.render;
    if (r === undefined) return undefined;
    let name = this.names.get(r.fn);
    if (name === undefined) {
      name = `fold_key_${++this.registered}`;
      const fn = r.fn;
      this.db.function(name, { deterministic: true }, (v: unknown) => fn(String(v)));
      this.names.set(fn, name);
    }
    return name;
  }
}
