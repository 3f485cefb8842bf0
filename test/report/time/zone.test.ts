import { describe, expect, it } from "vitest";
import {
  addDays,
  formattedWallTime,
  formatWall,
  type IntlZone,
  instantOf,
  isoWeekday,
  linkedZoneName,
  localZone,
  offsetMs,
  processZone,
  startOfDay,
  wallTime,
  zoneNamed,
} from "../../../src/report/time/zone.ts";

const z = (name: string): IntlZone => {
  const zone = zoneNamed(name);
  if (zone === undefined) throw new Error(`no zone ${name}`);
  return zone;
};
const H = 3_600_000;
const utc = (s: string) => Date.parse(s);

describe("zoneNamed", () => {
  it("knows IANA names and UTC, and refuses the rest", () => {
    expect(zoneNamed("Europe/Berlin")?.name).toBe("Europe/Berlin");
    expect(zoneNamed("UTC")?.name).toBe("UTC");
    expect(zoneNamed("Mars/Olympus")).toBeUndefined();
    expect(zoneNamed("")).toBeUndefined();
  });
});

describe("offsetMs", () => {
  it.each([
    ["UTC", "2026-06-01T00:00:00Z", 0],
    ["Asia/Kolkata", "2026-06-01T00:00:00Z", 5.5 * H],
    ["Asia/Kathmandu", "2026-06-01T00:00:00Z", 5.75 * H],
    ["Europe/Berlin", "2026-01-15T12:00:00Z", 1 * H],
    ["Europe/Berlin", "2026-07-15T12:00:00Z", 2 * H],
    ["America/New_York", "2026-01-15T12:00:00Z", -5 * H],
    ["America/New_York", "2026-07-15T12:00:00Z", -4 * H],
    ["Australia/Lord_Howe", "2026-01-15T12:00:00Z", 11 * H],
    ["Australia/Lord_Howe", "2026-07-15T12:00:00Z", 10.5 * H],
  ])("%s at %s is %d ms", (name, at, want) => {
    expect(offsetMs(z(name), utc(at))).toBe(want);
  });
});

describe("instantOf", () => {
  it.each([
    // plain times
    ["Asia/Kolkata", [2026, 11, 30, 0, 0, 0], "2026-11-29T18:30:00.000Z"],
    ["Asia/Kathmandu", [2026, 11, 30, 0, 0, 0], "2026-11-29T18:15:00.000Z"],
    ["America/New_York", [2026, 11, 30, 9, 15, 30], "2026-11-30T14:15:30.000Z"],
    // Berlin springs forward 2026-03-29 02:00 -> 03:00: 02:30 never happens, moved forward by the gap
    ["Europe/Berlin", [2026, 3, 29, 2, 30, 0], "2026-03-29T01:30:00.000Z"],
    ["Europe/Berlin", [2026, 3, 29, 3, 0, 0], "2026-03-29T01:00:00.000Z"],
    // Berlin falls back 2026-10-25 03:00 -> 02:00: 02:30 happens twice, the first is taken
    ["Europe/Berlin", [2026, 10, 25, 2, 30, 0], "2026-10-25T00:30:00.000Z"],
    // Santiago springs forward at midnight (2026-09-06 00:00 -> 01:00): the day starts at 01:00
    ["America/Santiago", [2026, 9, 6, 0, 0, 0], "2026-09-06T04:00:00.000Z"],
    // Lord Howe moves by 30 minutes
    ["Australia/Lord_Howe", [2026, 4, 5, 1, 45, 0], "2026-04-04T14:45:00.000Z"],
  ])("%s %j is %s", (name, [year, month, day, hour, minute, second], want) => {
    const w = { year, month, day, hour, minute, second } as Parameters<typeof instantOf>[1];
    expect(new Date(instantOf(z(name), w)).toISOString()).toBe(want);
  });

  it("round-trips every hour of a year through wallTime in odd zones", () => {
    for (const name of ["Asia/Kathmandu", "Europe/Berlin", "America/Santiago", "Australia/Lord_Howe"]) {
      const zone = z(name);
      for (let t = utc("2026-01-01T00:00:00Z"); t < utc("2027-01-01T00:00:00Z"); t += 3_600_000) {
        const w = wallTime(zone, t);
        const back = instantOf(zone, w);
        // Equal, or the first of two instants showing the same wall time (fall-back hour).
        expect(back === t || (back < t && t - back <= H), `${name} ${new Date(t).toISOString()}`).toBe(true);
      }
    }
  });
});

describe("calendar helpers", () => {
  it("adds days across months and years, and names ISO weekdays", () => {
    expect(addDays({ year: 2026, month: 12, day: 31 }, 1)).toEqual({ year: 2027, month: 1, day: 1 });
    expect(addDays({ year: 2028, month: 3, day: 1 }, -1)).toEqual({ year: 2028, month: 2, day: 29 });
    expect(isoWeekday({ year: 2026, month: 11, day: 30 })).toBe(1); // a Monday
    expect(isoWeekday({ year: 2026, month: 12, day: 6 })).toBe(7);
  });

  it("gives DST days their real length", () => {
    const berlin = z("Europe/Berlin");
    const len = (d: { year: number; month: number; day: number }) =>
      (startOfDay(berlin, addDays(d, 1)) - startOfDay(berlin, d)) / H;
    expect(len({ year: 2026, month: 3, day: 29 })).toBe(23);
    expect(len({ year: 2026, month: 10, day: 25 })).toBe(25);
    expect(len({ year: 2026, month: 11, day: 30 })).toBe(24);
    expect(formatWall(berlin, utc("2026-11-30T23:30:00Z"))).toBe("2026-12-01 00:30");
  });
});

describe("offsets cached per six-hour slot (one Intl call per slot, not per instant)", () => {
  // DST both ways, 30- and 45-minute offsets, a 30-minute DST, a midnight change, zones that
  // changed their standard offset, and pre-1972 local mean times of odd seconds.
  const ZONES = [
    "Europe/Berlin",
    "America/New_York",
    "America/Santiago",
    "America/St_Johns",
    "Asia/Kolkata",
    "Asia/Kathmandu",
    "Australia/Lord_Howe",
    "Pacific/Apia",
    "Africa/Monrovia",
    "Europe/Amsterdam",
    "Europe/Moscow",
    "Antarctica/Troll",
    "UTC",
  ];
  const fresh = (name: string): IntlZone => z(name);

  it("gives Intl's own wall time for any instant, 1900 to 2100, in every zone", async () => {
    const fc = await import("fast-check");
    const from = utc("1900-01-01T00:00:00Z");
    const to = utc("2100-01-01T00:00:00Z");
    for (const name of ZONES) {
      const zone = fresh(name);
      fc.assert(
        fc.property(fc.integer({ min: from, max: to }), (ms) => {
          expect(wallTime(zone, ms)).toEqual(formattedWallTime(zone, ms));
        }),
        { numRuns: 400 },
      );
    }
  });

  it("is exact at every second around every transition of 2026 and of the 1940s-70s", async () => {
    for (const name of ZONES) {
      const zone = fresh(name);
      for (const [start, end] of [
        ["1940-01-01T00:00:00Z", "1941-01-01T00:00:00Z"],
        ["1971-06-01T00:00:00Z", "1972-06-01T00:00:00Z"],
        ["2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"],
      ] as const) {
        // Find each transition hour with Intl, then compare every second of it.
        for (let t = utc(start); t < utc(end); t += H) {
          const a = formattedWallTime(zone, t);
          const b = formattedWallTime(zone, t + H);
          const moved =
            Date.UTC(b.year, b.month - 1, b.day, b.hour, b.minute, b.second) -
            Date.UTC(a.year, a.month - 1, a.day, a.hour, a.minute, a.second);
          if (moved === H) continue;
          for (let s = t; s <= t + H; s += 1000) {
            expect(wallTime(zone, s), `${name} ${new Date(s).toISOString()}`).toEqual(
              formattedWallTime(zone, s),
            );
          }
        }
      }
    }
  });

  it("asks Intl a few times per slot at most", () => {
    const zone = fresh("Europe/Berlin");
    let calls = 0;
    const real = zone.format.formatToParts.bind(zone.format);
    (zone.format as { formatToParts: typeof real }).formatToParts = (d) => {
      calls++;
      return real(d);
    };
    // 30 days of 15-minute buckets, both ends of each: 5,760 conversions.
    const t0 = utc("2026-03-01T00:00:00Z");
    for (let t = t0; t < t0 + 30 * 24 * H; t += 15 * 60_000) {
      wallTime(zone, t);
      wallTime(zone, t + 15 * 60_000 - 1);
    }
    expect(calls).toBeLessThanOrEqual(2 * 30 * 4 + 20); // two per slot, plus a bisection for the DST change
  });
});

describe("the machine's zone (localZone)", () => {
  const link = (target: string | undefined) => () => target;

  it("names the zone a /etc/localtime link points to, as ICU does, UTC's aliases as UTC", () => {
    expect(linkedZoneName("/usr/share/zoneinfo/Europe/Berlin")).toBe("Europe/Berlin");
    expect(linkedZoneName("../usr/share/zoneinfo/America/Argentina/Buenos_Aires")).toBe(
      "America/Argentina/Buenos_Aires",
    );
    expect(linkedZoneName("/var/db/timezone/zoneinfo/Asia/Kolkata")).toBe("Asia/Kolkata");
    expect(linkedZoneName("/usr/share/zoneinfo/Etc/UTC")).toBe("UTC");
    expect(linkedZoneName("/usr/share/zoneinfo/Etc/GMT+5")).toBe("Etc/GMT+5");
    expect(linkedZoneName("/usr/share/zoneinfo/posix/Europe/Berlin")).toBeUndefined();
    expect(linkedZoneName("/etc/some-file")).toBeUndefined();
    expect(linkedZoneName("/usr/share/zoneinfo/")).toBeUndefined();
  });

  it("names the UTC aliases as Intl does", () => {
    for (const alias of ["Etc/UTC", "Etc/GMT", "UCT", "Zulu", "Etc/Universal", "GMT0", "Greenwich"]) {
      expect(z(alias).format.resolvedOptions().timeZone).toBe("UTC");
      expect(linkedZoneName(`/usr/share/zoneinfo/${alias}`)).toBe("UTC");
    }
  });

  it("takes TZ as typed; with no TZ the linked zone without any Intl formatter; else Intl's", () => {
    expect(
      localZone({ env: { TZ: "Asia/Kolkata" }, localtimeLink: link("/usr/share/zoneinfo/UTC") }).name,
    ).toBe("Asia/Kolkata");
    const real = Intl.DateTimeFormat;
    try {
      // Any formatter would be the ~18 ms ICU start-up the linked zone exists to avoid.
      (Intl as { DateTimeFormat: unknown }).DateTimeFormat = () => {
        throw new Error("Intl.DateTimeFormat was called");
      };
      const zone = localZone({ env: {}, localtimeLink: link("/usr/share/zoneinfo/Etc/UTC") });
      expect(zone.name).toBe("UTC");
      expect(formatWall(zone, utc("2026-06-01T10:20:00Z"))).toBe(
        // The process's own zone, whatever the machine's: the link stands for it.
        formatWall(processZone("x"), utc("2026-06-01T10:20:00Z")),
      );
    } finally {
      (Intl as { DateTimeFormat: unknown }).DateTimeFormat = real;
    }
    const resolved = Intl.DateTimeFormat().resolvedOptions().timeZone;
    expect(localZone({ env: {}, localtimeLink: link(undefined) }).name).toBe(resolved);
    expect(
      localZone({ env: { TZ: "Mars/Olympus" }, localtimeLink: link("/usr/share/zoneinfo/UTC") }).name,
    ).toBe(resolved);
  });

  it("shows the same wall time as Intl for its zone, 1900 to 2100 and at every 2026 transition", async () => {
    const fc = await import("fast-check");
    const saved = process.env.TZ;
    try {
      for (const name of [
        "Europe/Berlin",
        "America/St_Johns",
        "Australia/Lord_Howe",
        "Africa/Monrovia",
        "UTC",
      ]) {
        // Node resets V8's zone when TZ is assigned: Date then shows `name`, as with a link to it.
        process.env.TZ = name;
        const zone = processZone(name);
        const reference = z(name);
        fc.assert(
          fc.property(
            fc.integer({ min: utc("1900-01-01T00:00:00Z"), max: utc("2100-01-01T00:00:00Z") }),
            (ms) => {
              expect(wallTime(zone, ms)).toEqual(formattedWallTime(reference, ms));
            },
          ),
          { numRuns: 300 },
        );
        for (let t = utc("2026-01-01T00:00:00Z"); t < utc("2027-01-01T00:00:00Z"); t += H) {
          if (offsetMs(reference, t) === offsetMs(reference, t + H)) continue;
          for (let s = t; s <= t + H; s += 1000)
            expect(wallTime(zone, s)).toEqual(formattedWallTime(reference, s));
        }
      }
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });
});
