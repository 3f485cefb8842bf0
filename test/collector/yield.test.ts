import { describe, expect, it } from "vitest";
import { loopTurn, turnDue, YIELD_EVERY_MS } from "../../src/collector/yield.ts";

describe("turnDue", () => {
  it("is due once the interval has passed since the last turn, not before", () => {
    expect(turnDue(0)).toBe(false);
    expect(turnDue(YIELD_EVERY_MS - 1)).toBe(false);
    expect(turnDue(YIELD_EVERY_MS)).toBe(true);
    expect(turnDue(5, 5)).toBe(true);
    expect(turnDue(4, 5)).toBe(false);
  });
});

/** A 0 ms timer set now, made due by a busy wait past the 1 ms timer floor: its flag. */
function dueTimer(): { fired: boolean } {
  const flag = { fired: false };
  setTimeout(() => {
    flag.fired = true;
  }, 0);
  const until = performance.now() + 3;
  while (performance.now() < until) {
    // busy, as a pass reading in this thread
  }
  return flag;
}

describe("loopTurn", () => {
  it("lets a due timer run before it resolves, from any phase (a settled promise does not)", async () => {
    const flag = dueTimer();
    await Promise.resolve();
    expect(flag.fired).toBe(false);
    await loopTurn();
    expect(flag.fired).toBe(true);
  });

  it("from a timer's callback too (where one setImmediate resolves before the next timers phase)", async () => {
    const seen = await new Promise<boolean>((resolve) => {
      setTimeout(() => {
        const flag = dueTimer();
        void loopTurn().then(() => resolve(flag.fired));
      }, 0);
    });
    expect(seen).toBe(true);
  });
});
