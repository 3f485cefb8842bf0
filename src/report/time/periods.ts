/** Calendar periods in a zone: days, ISO weeks (Monday first) and months, as instants and labels. */
import { addDays, formatDate, isoWeekday, type LocalDate, startOfDay, wallTime, type Zone } from "./zone.ts";

export const PERIODS = ["day", "week", "month"] as const;
export type Period = (typeof PERIODS)[number];

/** The first day of the period that contains day `d`. */
export function periodFirstDay(d: LocalDate, period: Period): LocalDate {
  if (period === "day") return d;
  if (period === "week") return addDays(d, 1 - isoWeekday(d));
  return { year: d.year, month: d.month, day: 1 };
}

/** The first day of the period after the one that starts on `first`. */
export function nextPeriodFirstDay(first: LocalDate, period: Period): LocalDate {
  if (period === "day") return addDays(first, 1);
  if (period === "week") return addDays(first, 7);
  return first.month === 12
    ? { year: first.year + 1, month: 1, day: 1 }
    : { year: first.year, month: first.month + 1, day: 1 };
}

/** A period's label: `2026-11-30` (day), the Monday `2026-11-30` (week), `2026-11` (month). */
export function periodLabel(first: LocalDate, period: Period): string {
  const date = formatDate(first);
  return period === "month" ? date.slice(0, 7) : date;
}

export interface PeriodBounds {
  readonly label: string;
  /** First instant of the period. */
  readonly startMs: number;
  /** First instant of the next period (the period is [startMs, endMs)). */
  readonly endMs: number;
}

/** The period of `zone` that contains instant `ms`. Lengths follow the zone: a DST day has 23 or 25 h. */
export function periodAt(zone: Zone, ms: number, period: Period): PeriodBounds {
  const first = periodFirstDay(wallTime(zone, ms), period);
  return {
    label: periodLabel(first, period),
    startMs: startOfDay(zone, first),
    endMs: startOfDay(zone, nextPeriodFirstDay(first, period)),
  };
}
