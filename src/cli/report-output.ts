/** What `report` prints for a resolved view: table, JSON or CSV, and the budget summary. */
import { budgetStatus, renderBudget } from "../report/budget.ts";
import { renderCsv } from "../report/csv.ts";
import { describeWindow, type ReportView } from "../report/options.ts";
import { acceptanceRate, type Numbers, type Report, renderTable } from "../report/report.ts";
import { formatWall } from "../report/time/zone.ts";

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

export function printReport(view: ReportView, report: Report): { text: string; overBudget: boolean } {
  const status =
    view.budget === undefined
      ? undefined
      : budgetStatus({
          period: view.budget.period,
          label: view.budget.label,
          startMs: view.fromMs ?? view.nowMs,
          endMs: view.toMs ?? view.nowMs,
          nowMs: view.nowMs,
          budget: view.budget.amount,
          spent: report.totals.cost,
          unpricedEvents: report.totals.unpricedEvents,
        });
  const overBudget = status?.over ?? false;
  if (view.format === "csv") return { text: renderCsv(report), overBudget };
  if (view.format === "json") {
    const window =
      view.fromMs === undefined && view.toMs === undefined
        ? {}
        : { window: { from: iso(view.fromMs), to: iso(view.toMs), timeZone: view.zone.name } };
    const budget =
      status === undefined
        ? {}
        : {
            budget: {
              period: status.period,
              label: status.label,
              timeZone: view.zone.name,
              start: iso(status.startMs),
              end: iso(status.endMs),
              budget: status.budget,
              spent: status.spent,
              unpricedEvents: status.unpricedEvents,
              complete: status.complete,
              left: status.left,
              projected: status.projected,
              over: status.over,
              projectedOver: status.projectedOver,
            },
          };
    // The acceptance rate is a ratio, not a sum: added to each row, never summed (null: no edit decided).
    const rated = <N extends Numbers>(n: N) => ({ ...n, acceptanceRate: acceptanceRate(n) ?? null });
    const others = report.others === undefined ? {} : { others: rated(report.others) };
    const body = {
      rows: report.rows.map(rated),
      totals: rated(report.totals),
      ...others,
      ...window,
      ...budget,
    };
    return { text: `${JSON.stringify(body)}\n`, overBudget };
  }
  const parts: string[] = [];
  if (status !== undefined) {
    if (view.by.length > 0) parts.push(renderTable(report));
    parts.push(renderBudget(status, view.zone.name, (ms) => formatWall(view.zone, ms)));
  } else {
    const heading = describeWindow(view);
    if (heading !== undefined) parts.push(heading);
    parts.push(
      report.rows.length === 0 && view.by.length > 0 ? "(no usage in this window)" : renderTable(report),
    );
    if (view.isDefault) parts.push("(--since, --until and --by pick another view; docs/report.md)");
  }
  return { text: `${parts.join("\n")}\n`, overBudget };
}
