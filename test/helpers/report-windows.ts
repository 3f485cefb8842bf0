/**
 * Random report windows for the rollup property tests (test/ledger/report-rollup-*.test.ts): a
 * start that may be open and a span that is often inside one rollup bucket (all of it edge), a
 * grouping and a bucket size. One copy, so every rollup step is checked over the same windows.
 */
import fc from "fast-check";
import type { LedgerDim, ReportWindow } from "../../src/ledger/rollups/report-queries.ts";
import { ROLLUP_BUCKET_MS } from "../../src/ledger/tables/report-rollup-v3.ts";

const DAY_MS = 86_400_000;

/** A drawn window, relative to the test's own time origin (reportWindow places it). */
export interface WindowDraw {
  /** ms after the origin; null: open (from the start of time). */
  readonly from: number | null;
  /** ms; null: open (to the end of time). */
  readonly span: number | null;
  readonly dims: LedgerDim[];
  readonly bucketMs: number;
}

/** 1..maxLength windows over `dims`, each bucketed by one of `bucketsMs`. */
export function windowsArb(
  dims: readonly LedgerDim[],
  bucketsMs: readonly number[],
  maxLength: number,
): fc.Arbitrary<WindowDraw[]> {
  return fc.array(
    fc.record({
      from: fc.option(fc.integer({ min: -3 * ROLLUP_BUCKET_MS, max: 3 * DAY_MS })),
      span: fc.option(
        fc.oneof(fc.integer({ min: 1, max: 2 * DAY_MS }), fc.integer({ min: 1, max: ROLLUP_BUCKET_MS })),
      ),
      dims: fc.subarray([...dims]),
      bucketMs: fc.constantFrom(...bucketsMs),
    }),
    { minLength: 1, maxLength },
  );
}

/** The window a draw stands for, its times placed after `originMs`. */
export function reportWindow(originMs: number, w: WindowDraw): ReportWindow {
  const fromMs = w.from === null ? Number.MIN_SAFE_INTEGER : originMs + w.from;
  const toMs =
    w.span === null
      ? Number.MAX_SAFE_INTEGER
      : fromMs === Number.MIN_SAFE_INTEGER
        ? originMs + w.span
        : fromMs + w.span;
  return { fromMs, toMs, bucketMs: w.bucketMs };
}
