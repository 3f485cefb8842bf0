/**
 * Grouped ledger totals with days, weeks and months of an IANA zone: SQL groups by UTC bucket
 * (./buckets.ts says why that is exact), this folds the buckets into periods.
 */
import type { GroupKind, LedgerDim, ReportQueries } from "../ledger/rollups/report-queries.ts";
import { BUCKET_WIDTHS_MS, bucketLabeller } from "./buckets.ts";
import { type GroupDim, isTimeDim } from "./dims.ts";
import type { Zone } from "./time/zone.ts";

export type Row = Record<string, unknown>;
export type GroupedQuery = (kind: GroupKind, dims: readonly GroupDim[]) => Row[];

/** The numeric columns of a grouped row: summed when buckets fold into one period. */
const SUMMED = [
  "input",
  "output",
  "cacheRead",
  "cacheWrite",
  "events",
  "toolCalls",
  "linesAdded",
  "linesRemoved",
  "editsAccepted",
  "editsRejected",
  "editsFailed",
  "activeUserSeconds",
  "activeAgentSeconds",
  "commits",
  "pullRequests",
] as const;

function compareRows(dims: readonly GroupDim[]) {
  return (a: Row, b: Row): number => {
    for (const d of dims) {
      const x = String(a[d] ?? "");
      const y = String(b[d] ?? "");
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  };
}

/** Sum rows with equal `dims` labels into one; the result is sorted by the labels. */
export function foldRows(rows: readonly Row[], dims: readonly GroupDim[]): Row[] {
  const out = new Map<string, Row>();
  for (const r of rows) {
    const key = JSON.stringify(dims.map((d) => r[d] ?? ""));
    const acc = out.get(key);
    if (acc === undefined) {
      const first: Row = {};
      for (const d of dims) first[d] = r[d];
      for (const k of SUMMED) if (typeof r[k] === "number") first[k] = r[k];
      out.set(key, first);
      continue;
    }
    for (const k of SUMMED)
      if (typeof r[k] === "number") acc[k] = ((acc[k] as number) ?? 0) + (r[k] as number);
  }
  return [...out.values()].sort(compareRows(dims));
}

/**
 * Queries over [fromMs, toMs) whose time dimensions are periods of `zone`. Without a time
 * dimension this is the SQL grouping itself.
 */
/** The kinds whose columns are not priced (no tokens). */
const PRICELESS: ReadonlySet<GroupKind> = new Set(["edits", "activity"]);

export function groupedQuery(queries: ReportQueries, fromMs: number, toMs: number, zone: Zone): GroupedQuery {
  // A report needs every grouping also by (provider, model), to price it: each grouping is read
  // from SQL once, by provider and model, and coarser ones are folded from it (every column sums:
  // a message, hence its distinct usage key, has one provider and model). Edits and activity carry
  // no price: read by their own dimensions (a view by session then sums the edits' packs, not each edit).
  const seen = new Map<string, Row[]>();
  const query: GroupedQuery = (kind, dims) => {
    const key = `${kind}:${dims.join(",")}`;
    let rows = seen.get(key);
    if (rows === undefined) {
      const priced = PRICELESS.has(kind) ? dims : [...new Set<GroupDim>([...dims, "provider", "model"])];
      rows = priced.length === dims.length ? run(kind, dims) : foldRows(query(kind, priced), dims);
      seen.set(key, rows);
    }
    return rows;
  };
  return query;

  function run(kind: GroupKind, dims: readonly GroupDim[]): Row[] {
    const time = dims.filter(isTimeDim);
    const columns = [...new Set(dims.map((d): LedgerDim => (isTimeDim(d) ? "bucket" : d)))];
    // From the ledger's rollup where it can answer (ReportQueries.summed), else its rows.
    if (time.length === 0) return queries.summed(kind, columns, { fromMs, toMs, bucketMs: 1 });
    for (const bucketMs of BUCKET_WIDTHS_MS) {
      const rows = queries.summed(kind, columns, { fromMs, toMs, bucketMs });
      const labellers = time.map((d) => [d, bucketLabeller(zone, d, bucketMs)] as const);
      const labelled: Row[] = [];
      let exact = true;
      for (const r of rows) {
        const row: Row = { ...r };
        for (const [d, label] of labellers) {
          const l = label(Number(r.bucket));
          if (l === undefined) exact = false;
          row[d] = l;
        }
        labelled.push(row);
        if (!exact) break;
      }
      if (exact) return foldRows(labelled, dims);
    }
    throw new Error("unreachable: one-second buckets always lie inside one period");
  }
}
