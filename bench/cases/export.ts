/**
 * Case 5: export at 1,000 and 10,000 sessions, measured by bench/export.ts (the export
 * engineer's benchmark: a synthetic ledger exported cumulatively through the real OTLP
 * exporters to a local receiver, each size in its own child process).
 */
import { benchExport, type ExportBenchResult } from "../export.ts";
import type { CaseResult, Row } from "../lib/report.ts";
import { fmt, MiB } from "../lib/stats.ts";

export function exportCase(sizes: readonly number[]): CaseResult {
  const results: ExportBenchResult[] = benchExport(sizes);
  const rows: Row[] = [];
  for (const r of results) {
    rows.push(
      {
        case: "export",
        measure: `${r.sessions} sessions: ${r.series} series, http/protobuf`,
        value: `${fmt(r.protobuf.flushMs, 0)} ms`,
        baseline: `${fmt(r.protobuf.bytes / MiB, 2)} MiB (gzip ${fmt(r.protobuf.gzipBytes / MiB, 2)})`,
        ...(r.protobuf.ok ? {} : { target: "delivered", ok: false }),
      },
      {
        case: "export",
        measure: "  http/json",
        value: `${fmt(r.json.flushMs, 0)} ms`,
        baseline: `${fmt(r.json.bytes / MiB, 2)} MiB (gzip ${fmt(r.json.gzipBytes / MiB, 2)})`,
        ...(r.json.ok ? {} : { target: "delivered", ok: false }),
      },
      {
        case: "export",
        measure: "  peak RSS of the exporting process",
        value: `${fmt(r.maxRssMB, 0)} MB`,
        baseline: `${fmt(r.fillMaxRssMB, 0)} MB peak before exporting, ${fmt(r.rssMB, 0)} MB after both exports`,
        target: "<= 200 MB",
        ok: r.maxRssMB <= 200,
      },
    );
  }
  return {
    name: "export",
    rows,
    notes: results.map(
      (r) =>
        `export: ${r.sessions} sessions, ${r.events} events, ${r.toolCalls} tool calls; series per metric ` +
        `${Object.entries(r.seriesByMetric)
          .map(([k, v]) => `${k} ${v}`)
          .join(", ")}; ledger read+translate ${fmt(r.collectMs, 0)} ms`,
    ),
    data: results,
  };
}
