/**
 * Day, week and month labels in an IANA zone for rows that SQL grouped by UTC bucket. SQLite has
 * no IANA zones, but every zone's offset since 1972 is a whole number of 15 minutes and changes
 * on such a boundary, so a 15-minute UTC bucket lies inside one local day: grouping by bucket in
 * SQL and labelling each bucket once here is exact. A bucket that does straddle a boundary (an
 * older, odd offset) is reported as such, and the caller regroups by second.
 */
import { type Period, periodFirstDay, periodLabel } from "./time/periods.ts";
import { wallTime, type Zone } from "./time/zone.ts";

/** SQL bucket widths, tried in order: 15 minutes, then 1 second (offsets are whole seconds). */
export const BUCKET_WIDTHS_MS: readonly number[] = [15 * 60_000, 1000];

/** Label of the period of `zone` containing instant `ms`. */
export function labelAt(zone: Zone, period: Period, ms: number): string {
  return periodLabel(periodFirstDay(wallTime(zone, ms), period), period);
}

/**
 * A memoized labeller for buckets of `widthMs` starting at multiples of it: the label, or
 * undefined when the bucket's first and last instants fall in different periods.
 */
export function bucketLabeller(
  zone: Zone,
  period: Period,
  widthMs: number,
): (bucketStartMs: number) => string | undefined {
  const memo = new Map<number, string | undefined>();
  return (start) => {
    if (memo.has(start)) return memo.get(start);
    const first = labelAt(zone, period, start);
    const label = labelAt(zone, period, start + widthMs - 1) === first ? first : undefined;
    memo.set(start, label);
    return label;
  };
}
