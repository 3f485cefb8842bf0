import { describe, expect, it } from "vitest";
import { type Bound, parseTimeArg } from "../../../src/report/time/parse.ts";
import { zoneNamed } from "../../../src/report/time/zone.ts";

// Tuesday 2026-12-01 14:30 in Berlin (+01:00).
const NOW = Date.parse("2026-12-01T13:30:00Z");
const berlin = zoneNamed("Europe/Berlin");
if (berlin === undefined) throw new Error("no Europe/Berlin");

const at = (text: string, bound: Bound, zone = berlin) => {
  const r = parseTimeArg(text, bound, NOW, zone);
  return "ms" in r ? new Date(r.ms).toISOString() : `error: ${r.error}`;
};

describe("parseTimeArg", () => {
  it.each<[string, Bound, string]>([
    // dates are whole local days: --since at their start, --until after their end
    ["2026-11-30", "since", "2026-11-29T23:00:00.000Z"],
    ["2026-11-30", "until", "2026-11-30T23:00:00.000Z"],
    // local date-times, and absolute ones
    ["2026-11-30T14:00", "since", "2026-11-30T13:00:00.000Z"],
    ["2026-11-30 14:00:30", "since", "2026-11-30T13:00:30.000Z"],
    ["2026-11-30T14:00:00Z", "since", "2026-11-30T14:00:00.000Z"],
    ["2026-11-30T14:00:00.5+05:30", "until", "2026-11-30T08:30:00.500Z"],
    ["2026-11-30T14:00-0300", "until", "2026-11-30T17:00:00.000Z"],
    // relative: hours are exact, days are calendar days ending today
    ["24h", "since", "2026-11-30T13:30:00.000Z"],
    ["1d", "since", "2026-11-30T23:00:00.000Z"],
    ["7d", "since", "2026-11-24T23:00:00.000Z"],
    ["2w", "since", "2026-11-17T23:00:00.000Z"],
    ["0d", "until", "2026-12-01T23:00:00.000Z"],
    ["7d", "until", "2026-11-24T23:00:00.000Z"],
    ["today", "since", "2026-11-30T23:00:00.000Z"],
    ["today", "until", "2026-12-01T23:00:00.000Z"],
    ["Yesterday", "since", "2026-11-29T23:00:00.000Z"],
    // calendar periods: ISO weeks start on Monday (2026-11-30), months on the 1st
    ["this-week", "since", "2026-11-29T23:00:00.000Z"],
    ["this-week", "until", "2026-12-06T23:00:00.000Z"],
    ["last week", "since", "2026-11-22T23:00:00.000Z"],
    ["last-week", "until", "2026-11-29T23:00:00.000Z"],
    ["this-month", "since", "2026-11-30T23:00:00.000Z"],
    ["last-month", "since", "2026-10-31T23:00:00.000Z"],
    ["last-month", "until", "2026-11-30T23:00:00.000Z"],
    // refused
    ["2026-02-30", "since", "error: 2026-02-30 is not a calendar date"],
    ["2026-11-30T25:00", "since", "error: 2026-11-30T25:00 is not a valid date-time"],
    ["0d", "since", "error: 0d covers no day (use 1d for today)"],
    ["next week", "since", 'error: cannot read "next week"'],
    ["-7d", "since", 'error: cannot read "-7d"'],
  ])("%s as --%s is %s", (text, bound, want) => {
    expect(at(text, bound)).toBe(want);
  });

  it("uses the zone for dates: +05:45 and a DST day", () => {
    const ktm = zoneNamed("Asia/Kathmandu");
    if (ktm === undefined) throw new Error("no Asia/Kathmandu");
    expect(at("2026-11-30", "since", ktm)).toBe("2026-11-29T18:15:00.000Z");
    // Berlin's 2026-03-29 has 23 hours: --since and --until of that date are 23 h apart
    const s = parseTimeArg("2026-03-29", "since", NOW, berlin);
    const u = parseTimeArg("2026-03-29", "until", NOW, berlin);
    expect("ms" in s && "ms" in u ? (u.ms - s.ms) / 3_600_000 : Number.NaN).toBe(23);
  });
});
