/**
 * Case 8: the cumulative export of folded series (session id off, the team setting): the old whole
 * fold in JS vs the paged fold in SQL at two history sizes (bench/fold.ts), heap and RSS peaks.
 */
import { benchFold, foldReport } from "../fold.ts";
import type { CaseResult, Row } from "../lib/report.ts";
import { fmt } from "../lib/stats.ts";

export function foldCase(sizes: readonly number[]): CaseResult {
  const runs = benchFold(sizes);
  const rows: Row[] = runs.map((r) => ({
    case: "fold",
    measure: `${r.sessions} sessions, ${r.way === "old" ? "old fold (every row, JS)" : "paged fold (SQL)"}: heap peak`,
    value: `+${fmt(r.heapPeakMB, 1)} MB`,
    baseline: `${fmt(r.ms, 0)} ms, RSS peak ${fmt(r.maxRssMB, 0)} MB, ${r.points} points in ${r.pages} page(s)`,
  }));
  const big = runs.filter((r) => r.way === "paged").map((r) => r.heapPeakMB);
  if (big.length >= 2) {
    const [first, last] = [big[0] as number, big[big.length - 1] as number];
    rows.push({
      case: "fold",
      measure: `paged fold heap peak, ${sizes[sizes.length - 1]} vs ${sizes[0]} sessions`,
      value: `${fmt(last / Math.max(first, 0.01), 2)}x`,
      target: "<= 1.5x (does not grow with the history)",
      ok: last <= 1.5 * Math.max(first, 0.5),
    });
  }
  return { name: "fold", rows, notes: foldReport(runs), data: runs };
}
