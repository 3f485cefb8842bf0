/**
 * `--since` / `--until` values: a date (whole days in the report's zone, both ends inclusive), a
 * date-time (local to the zone, or absolute with `Z` / `±HH:MM`), a calendar period (today,
 * this-week, last-month, ...), or a time relative to now.
 * Each resolves to one instant; the report covers [since, until).
 */
import { nextPeriodFirstDay, periodFirstDay } from "./periods.ts";
import { addDays, instantOf, type LocalDate, startOfDay, wallTime, type Zone } from "./zone.ts";

export type Bound = "since" | "until";

export const TIME_ARG_HELP =
  "a date (2026-11-30), a date-time (2026-11-30T14:00, local to --timezone, or with Z or +01:00), " +
  "today, yesterday, this-week, last-week, this-month, last-month, or a time relative to now (24h, 7d, 2w)";

export type TimeArg = { readonly ms: number } | { readonly error: string };

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|[+-]\d{2}:?\d{2})?$/i;
const RELATIVE = /^(\d+)([hdw])$/;
const CALENDAR = /^(this|last)[- ](week|month)$/;

function validDate(y: number, m: number, d: number): LocalDate | undefined {
  const t = new Date(Date.UTC(y, m - 1, d));
  if (t.getUTCFullYear() !== y || t.getUTCMonth() !== m - 1 || t.getUTCDate() !== d) return undefined;
  return { year: y, month: m, day: d };
}

/**
 * Resolve one `--since` / `--until` value. Days are whole: `--since D` starts at D's first
 * instant and `--until D` ends after D's last; `Nd` means the N calendar days ending today for
 * `--since` and "up to and including the day N days ago" for `--until`; `Nh` is exactly N hours
 * before now; `Nw` is 7N days.
 */
export function parseTimeArg(text: string, bound: Bound, nowMs: number, zone: Zone): TimeArg {
  const s = text.trim().toLowerCase();
  const today = wallTime(zone, nowMs);
  const dayEdge = (d: LocalDate) => startOfDay(zone, bound === "since" ? d : addDays(d, 1));
  if (s === "today") return { ms: dayEdge(today) };
  if (s === "yesterday") return { ms: dayEdge(addDays(today, -1)) };
  const cal = CALENDAR.exec(s);
  if (cal) {
    // this-week / last-week: ISO weeks (Monday first); months of the calendar.
    const period = cal[2] === "week" ? "week" : "month";
    let first = periodFirstDay(today, period);
    if (cal[1] === "last") first = periodFirstDay(addDays(first, -1), period);
    return { ms: startOfDay(zone, bound === "since" ? first : nextPeriodFirstDay(first, period)) };
  }
  const rel = RELATIVE.exec(s);
  if (rel) {
    const n = Number(rel[1]);
    const unit = rel[2];
    if (unit === "h") return { ms: nowMs - n * 3_600_000 };
    const days = unit === "w" ? 7 * n : n;
    if (bound === "since") {
      if (days === 0) return { error: `${text} covers no day (use 1d for today)` };
      return { ms: dayEdge(addDays(today, 1 - days)) };
    }
    return { ms: dayEdge(addDays(today, -days)) };
  }
  const date = DATE.exec(s);
  if (date) {
    const d = validDate(Number(date[1]), Number(date[2]), Number(date[3]));
    if (d === undefined) return { error: `${text} is not a calendar date` };
    return { ms: dayEdge(d) };
  }
  const dt = DATE_TIME.exec(s);
  if (dt) {
    const d = validDate(Number(dt[1]), Number(dt[2]), Number(dt[3]));
    const [hour, minute, second] = [Number(dt[4]), Number(dt[5]), Number(dt[6] ?? 0)];
    if (d === undefined || hour > 23 || minute > 59 || second > 59)
      return { error: `${text} is not a valid date-time` };
    const millis = Number((dt[7] ?? "0").padEnd(3, "0"));
    const zoneText = dt[8];
    if (zoneText === undefined) return { ms: instantOf(zone, { ...d, hour, minute, second }) + millis };
    let offset = 0;
    if (zoneText !== "z") {
      const digits = zoneText.replace(":", "");
      const sign = digits.startsWith("-") ? -1 : 1;
      const oh = Number(digits.slice(1, 3));
      const om = Number(digits.slice(3, 5));
      if (oh > 23 || om > 59) return { error: `${text} has an invalid UTC offset` };
      offset = sign * (oh * 60 + om) * 60_000;
    }
    return { ms: Date.UTC(d.year, d.month - 1, d.day, hour, minute, second, millis) - offset };
  }
  return { error: `cannot read ${JSON.stringify(text)}` };
}
