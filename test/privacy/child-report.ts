/**
 * What every privacy child does after its pass: the report in each grouping the canary could reach
 * (printed, and kept alive so the heap snapshot holds it), then the pass's problems.
 */
import { catalogPriceTable } from "../../src/cost/index.ts";
import type { Ledger } from "../../src/ledger/ledger.ts";
import { buildReport, renderTable } from "../../src/report/report.ts";

export function printReports(ledger: Ledger, problems: readonly unknown[], keep: unknown[]): void {
  for (const by of [[], ["tool"], ["project", "session", "agent", "model", "provider", "day"]] as const) {
    const report = buildReport(ledger, by, catalogPriceTable());
    keep.push(report);
    process.stdout.write(`${renderTable(report)}\n${JSON.stringify(report)}\n`);
  }
  process.stdout.write(`${JSON.stringify(problems)}\n`);
}
