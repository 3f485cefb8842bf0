import { describe, expect, it } from "vitest";
import { budgetStatus, projectSpend, renderBudget } from "../../src/report/budget.ts";

const H = 3_600_000;

describe("projectSpend", () => {
  it.each([
    // spent, start, end, now -> projected
    [5, 0, 24 * H, 6 * H, 20],
    [5, 0, 24 * H, 24 * H, 5],
    [5, 0, 24 * H, 30 * H, 5], // after the period: what was spent
    [5, 0, 24 * H, 0, 5], // nothing elapsed yet
    [0, 0, 24 * H, 12 * H, 0],
    [3, 0, 23 * H, 11.5 * H, 6], // a 23-hour DST day
  ])("%d spent in [%d, %d) at %d projects %d", (spent, start, end, now, want) => {
    expect(projectSpend(spent, start, end, now)).toBeCloseTo(want, 9);
  });
});

describe("budgetStatus", () => {
  const base = {
    period: "day" as const,
    label: "2026-12-01",
    startMs: 0,
    endMs: 24 * H,
    nowMs: 12 * H,
    budget: 20,
    unpricedEvents: 0,
  };
  it.each([
    // spent -> over, projectedOver, left
    [8, false, false, 12],
    [12, false, true, 8],
    [20, false, true, 0], // exactly the budget is not over
    [20.01, true, true, -0.01],
  ])("spent %d: over %s, projected over %s, left %d", (spent, over, projectedOver, left) => {
    const s = budgetStatus({ ...base, spent });
    expect(s.over).toBe(over);
    expect(s.projectedOver).toBe(projectedOver);
    expect(s.left).toBeCloseTo(left, 9);
    expect(s.complete).toBe(true);
  });

  it("says unknown, not zero, when some requests have no price", () => {
    const s = budgetStatus({ ...base, spent: 0, unpricedEvents: 3 });
    expect(s.complete).toBe(false);
    expect(s.over).toBe(false);
    const text = renderBudget(s, "UTC", (ms) => String(ms));
    expect(text).toMatch(/spent +at least \$0\.00/);
    expect(text).toMatch(/left +at most \$20\.00/);
    expect(text).toMatch(/3 request\(s\) used a model with no known price: their cost is unknown, not zero/);
  });

  it("prints OVER BUDGET and a warning when the projection passes the budget", () => {
    const fmt = (ms: number) => String(ms / H);
    expect(renderBudget(budgetStatus({ ...base, spent: 25 }), "UTC", fmt)).toMatch(
      /^OVER BUDGET: \$25\.00 spent of \$20\.00\.$/m,
    );
    expect(renderBudget(budgetStatus({ ...base, spent: 12 }), "UTC", fmt)).toMatch(
      /^warning: at this rate the day ends at \$24\.00, over the budget\.$/m,
    );
  });
});
