/**
 * Case 7: a first export of a long history to a slow backend (1 request/s, 256 KB/s), measured by
 * bench/slow-backend.ts: runs until delivered, time to deliver, bytes, and the next run.
 */
import type { CaseResult, Row } from "../lib/report.ts";
import { fmt, MiB } from "../lib/stats.ts";
import { formatSlowBackend, measureSlowBackend, type SlowBackendResult, THROTTLES } from "../slow-backend.ts";

export async function slowCase(sessions: number): Promise<CaseResult> {
  const results: SlowBackendResult[] = [];
  for (const t of THROTTLES) results.push(await measureSlowBackend(sessions, t));
  const rows: Row[] = results.map((r) => ({
    case: "slow",
    measure: `${r.sessions} sessions to a backend at ${r.throttle}: time to deliver`,
    value: r.delivered ? `${fmt(r.timeToDeliverMs / 1000, 0)} s in ${r.runs.length} run(s)` : "never",
    baseline: `${fmt(r.bytesToDeliver / MiB, 1)} MiB, ${r.runs.reduce((x, y) => x + y.requests, 0)} requests`,
    target: "delivered, 1 run",
    ok: r.delivered && r.runs.length === 1 && r.errors.length === 0,
  }));
  return { name: "slow", rows, notes: formatSlowBackend(results).split("\n"), data: results };
}
