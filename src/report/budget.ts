/**
 * `report --budget <USD> --period day|week|month`: spend so far in the current period, what is
 * left, and where the period ends at the current rate. Requests whose model has no price make the
 * spend a lower bound ("at least"), never a zero.
 */
import type { Period } from "./time/periods.ts";

export interface BudgetInput {
  readonly period: Period;
  readonly label: string;
  readonly startMs: number;
  readonly endMs: number;
  readonly nowMs: number;
  /** USD. */
  readonly budget: number;
  /** USD over the priced requests of the period. */
  readonly spent: number;
  /** Requests of the period whose cost is unknown. */
  readonly unpricedEvents: number;
}

export interface BudgetStatus extends BudgetInput {
  /** budget - spent (negative when over); an upper bound when some cost is unknown. */
  readonly left: number;
  /** The spend at the end of the period if it goes on at the rate so far. */
  readonly projected: number;
  /** Spent more than the budget (by the known costs alone). */
  readonly over: boolean;
  /** The projection passes the budget. */
  readonly projectedOver: boolean;
  /** Every request of the period was priced: `spent` is exact, not a lower bound. */
  readonly complete: boolean;
}

/**
 * Linear projection: spend per elapsed ms times the period's length. Before the period starts
 * (or at its first instant) nothing has elapsed, so the projection is what is spent already.
 */
export function projectSpend(spent: number, startMs: number, endMs: number, nowMs: number): number {
  const elapsed = Math.min(nowMs, endMs) - startMs;
  if (elapsed <= 0) return spent;
  return (spent * (endMs - startMs)) / elapsed;
}

export function budgetStatus(b: BudgetInput): BudgetStatus {
  const projected = projectSpend(b.spent, b.startMs, b.endMs, b.nowMs);
  return {
    ...b,
    left: b.budget - b.spent,
    projected,
    over: b.spent > b.budget,
    projectedOver: projected > b.budget,
    complete: b.unpricedEvents === 0,
  };
}

/** Dollars and cents; four decimals under a dollar, as the report's cost column. */
const usd = (n: number) => `$${n.toFixed(Math.abs(n) < 1 && n !== 0 ? 4 : 2)}`;

/** The human-readable summary, one fact per line. */
export function renderBudget(s: BudgetStatus, zoneName: string, formatWall: (ms: number) => string): string {
  const atLeast = s.complete ? "" : "at least ";
  const atMost = s.complete ? "" : "at most ";
  const elapsedPct = Math.max(0, Math.min(1, (s.nowMs - s.startMs) / (s.endMs - s.startMs))) * 100;
  const lines = [
    `Budget for this ${s.period} (${s.label}, ${zoneName}; ${formatWall(s.startMs)} to ${formatWall(s.endMs)}, ${elapsedPct.toFixed(0)}% elapsed)`,
    `  spent      ${atLeast}${usd(s.spent)}`,
    `  budget     ${usd(s.budget)}`,
    s.left >= 0 ? `  left       ${atMost}${usd(s.left)}` : `  over by    ${atLeast}${usd(-s.left)}`,
    `  projected  ${atLeast}${usd(s.projected)} by ${formatWall(s.endMs)} at the rate so far`,
  ];
  if (!s.complete) {
    lines.push(
      `  unknown    ${s.unpricedEvents} request(s) used a model with no known price: their cost is unknown, not zero (add it with --prices)`,
    );
  }
  if (s.over) lines.push(`OVER BUDGET: ${atLeast}${usd(s.spent)} spent of ${usd(s.budget)}.`);
  else if (s.projectedOver)
    lines.push(
      `warning: at this rate the ${s.period} ends at ${atLeast}${usd(s.projected)}, over the budget.`,
    );
  return lines.join("\n");
}
