import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { groupedInteger } from "../../src/report/numbers.ts";

describe("groupedInteger", () => {
  it("writes what toLocaleString('en-US') writes, for every integer", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer(),
          fc.maxSafeInteger(),
          fc.maxSafeInteger().map((n) => -n),
          fc.double(),
        ),
        (n) => {
          const x = Number.isInteger(n) || !Number.isFinite(n) ? n : Math.trunc(n);
          expect(groupedInteger(x)).toBe(x.toLocaleString("en-US"));
        },
      ),
      { numRuns: 2000 },
    );
    for (const n of [0, -0, 7, 999, 1000, -1000, 123456, 1234567, 1e21, 2 ** 53, Number.NaN, -Infinity])
      expect(groupedInteger(n)).toBe(n.toLocaleString("en-US"));
  });
});
