/**
 * `report --csv`: a header row, then one row per group, numbers unformatted. No totals row: every
 * row is a group, so a spreadsheet's SUM of a column is the total; when `--top` cut groups, one
 * last row summing them (its first column `(N more)`) keeps that true. A cost nothing was known
 * for is an empty cell (unknown), never 0.
 */
import { acceptanceRate, costUnknown, type Numbers, othersLabel, type Report } from "./report.ts";

export const CSV_NUMBER_COLUMNS: readonly (keyof Numbers | "acceptanceRate")[] = [
  "input",
  "output",
  "cacheRead",
  "cacheWrite",
  "events",
  "toolCalls",
  "cost",
  "unpricedEvents",
  // Active time (s) and the commits and pull requests of the agent's commands (docs/report.md).
  "activeUserSeconds",
  "activeAgentSeconds",
  "commits",
  "pullRequests",
  "linesAdded",
  "linesRemoved",
  "editsAccepted",
  "editsRejected",
  "editsFailed",
  // accepted / (accepted + rejected); empty when no edit was decided (not a sum: not summable).
  "acceptanceRate",
];

/** RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled. */
export function csvField(v: string): string {
  return /[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v;
}

/** Unformatted, without the float noise of sums (0.0036000000000000003 -> 0.0036). */
function plain(v: number): string {
  return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(15)));
}

function numberCells(n: Numbers): string[] {
  return CSV_NUMBER_COLUMNS.map((k) => {
    if (k === "acceptanceRate") {
      const r = acceptanceRate(n);
      return r === undefined ? "" : plain(r);
    }
    return k === "cost" && costUnknown(n) ? "" : plain(n[k]);
  });
}

export function renderCsv(report: Report): string {
  const lines = [[...report.by, ...CSV_NUMBER_COLUMNS].map(csvField).join(",")];
  for (const r of report.rows) {
    lines.push([...report.by.map((d) => String(r[d] ?? "")), ...numberCells(r)].map(csvField).join(","));
  }
  if (report.others !== undefined) {
    const first = othersLabel(report.others.groups);
    lines.push(
      [...report.by.map((_, i) => (i === 0 ? first : "")), ...numberCells(report.others)]
        .map(csvField)
        .join(","),
    );
  }
  return `${lines.join("\n")}\n`;
}
