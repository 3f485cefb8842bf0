import { describe, expect, it } from "vitest";
import { labelAt } from "../../../src/report/buckets.ts";
import { type Period, periodAt } from "../../../src/report/time/periods.ts";
import { zoneNamed } from "../../../src/report/time/zone.ts";

const iso = (ms: number) => new Date(ms).toISOString();

describe("periodAt", () => {
  it.each<[string, string, Period, string, string, string]>([
    [
      "UTC",
      "2026-12-01T10:00:00Z",
      "day",
      "2026-12-01",
      "2026-12-01T00:00:00.000Z",
      "2026-12-02T00:00:00.000Z",
    ],
    // 20:00 UTC is already tomorrow in Kolkata (+05:30) and Kathmandu (+05:45)
    [
      "Asia/Kolkata",
      "2026-11-30T20:00:00Z",
      "day",
      "2026-12-01",
      "2026-11-30T18:30:00.000Z",
      "2026-12-01T18:30:00.000Z",
    ],
    [
      "Asia/Kathmandu",
      "2026-11-30T18:14:59Z",
      "day",
      "2026-11-30",
      "2026-11-29T18:15:00.000Z",
      "2026-11-30T18:15:00.000Z",
    ],
    [
      "Asia/Kathmandu",
      "2026-11-30T18:15:00Z",
      "day",
      "2026-12-01",
      "2026-11-30T18:15:00.000Z",
      "2026-12-01T18:15:00.000Z",
    ],
    // ISO weeks start on Monday; a Sunday belongs to the week before
    [
      "UTC",
      "2026-12-06T23:59:59Z",
      "week",
      "2026-11-30",
      "2026-11-30T00:00:00.000Z",
      "2026-12-07T00:00:00.000Z",
    ],
    [
      "UTC",
      "2026-12-07T00:00:00Z",
      "week",
      "2026-12-07",
      "2026-12-07T00:00:00.000Z",
      "2026-12-14T00:00:00.000Z",
    ],
    // a week across New Year and a month in a DST zone
    [
      "UTC",
      "2027-01-01T12:00:00Z",
      "week",
      "2026-12-28",
      "2026-12-28T00:00:00.000Z",
      "2027-01-04T00:00:00.000Z",
    ],
    [
      "Europe/Berlin",
      "2026-10-15T12:00:00Z",
      "month",
      "2026-10",
      "2026-09-30T22:00:00.000Z",
      "2026-10-31T23:00:00.000Z",
    ],
    [
      "America/New_York",
      "2026-12-31T23:00:00Z",
      "month",
      "2026-12",
      "2026-12-01T05:00:00.000Z",
      "2027-01-01T05:00:00.000Z",
    ],
    // the DST days themselves: 23 and 25 hours
    [
      "Europe/Berlin",
      "2026-03-29T12:00:00Z",
      "day",
      "2026-03-29",
      "2026-03-28T23:00:00.000Z",
      "2026-03-29T22:00:00.000Z",
    ],
    [
      "Europe/Berlin",
      "2026-10-25T12:00:00Z",
      "day",
      "2026-10-25",
      "2026-10-24T22:00:00.000Z",
      "2026-10-25T23:00:00.000Z",
    ],
    // the week holding a DST change is 167 hours long
    [
      "Europe/Berlin",
      "2026-03-29T12:00:00Z",
      "week",
      "2026-03-23",
      "2026-03-22T23:00:00.000Z",
      "2026-03-29T22:00:00.000Z",
    ],
  ])("%s %s %s is %s [%s, %s)", (name, at, period, label, start, end) => {
    const zone = zoneNamed(name);
    if (zone === undefined) throw new Error(name);
    const p = periodAt(zone, Date.parse(at), period);
    expect({ label: p.label, start: iso(p.startMs), end: iso(p.endMs) }).toEqual({ label, start, end });
    // labelAt (what the report groups by) agrees at both ends
    expect(labelAt(zone, period, p.startMs)).toBe(label);
    expect(labelAt(zone, period, p.endMs - 1)).toBe(label);
    expect(labelAt(zone, period, p.endMs)).not.toBe(label);
  });
});
