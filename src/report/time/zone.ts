/**
 * IANA time zones through Intl, with no dependency: the wall-clock time of an instant, and the
 * instant of a wall-clock time. SQLite knows only UTC and the machine's zone, so `report` groups
 * in UTC buckets and labels them here (see ../buckets.ts). The machine's own zone is read from
 * `Date` where its name is known without Intl (localZone): the first Intl formatter of a process
 * costs ~18 ms of ICU start-up, 3 % of an idle `report` (docs/performance.md).
 */
import { readlinkSync } from "node:fs";

/** A calendar date in some zone (month and day 1-based). */
export interface LocalDate {
  readonly year: number;
  readonly month: number;
  readonly day: number;
}

export interface WallTime extends LocalDate {
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
}

/**
 * A resolved zone: its name, where its offsets come from (`shownOffset`: what its clocks show at a
 * whole second, uncached), and the offsets already asked of it (see offsetMs): formatToParts costs
 * ~10-30 µs a call, and a report labels thousands of 15-minute buckets.
 */
export interface Zone {
  readonly name: string;
  readonly shownOffset: (whole: number) => number;
  /** The zone's offsets by SLOT_MS-long UTC slot, as far as already computed. */
  readonly slots: Map<number, SlotOffsets>;
}

/** A zone read through Intl: any IANA name; `format` is the reference every conversion matches. */
export interface IntlZone extends Zone {
  readonly format: Intl.DateTimeFormat;
}

/** A slot's offset before `changeAt` and from it on (the same when the slot has no transition). */
export interface SlotOffsets {
  readonly before: number;
  readonly changeAt: number;
  readonly after: number;
}

const DAY_MS = 86_400_000;

/**
 * Offsets are computed once per six-hour UTC slot: tzdb zones change their offset at most once in
 * such a span (instantOf relies on at most once a day already), so a slot whose first and last
 * second show the same offset has it throughout, and one that does not has exactly one change,
 * found by bisection to the second (offsets and transitions are whole seconds).
 */
export const SLOT_MS = 6 * 3_600_000;

/** The zone named `name` (an IANA name such as `Europe/Berlin`, or `UTC`), or undefined if unknown. */
export function zoneNamed(name: string): IntlZone | undefined {
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: name,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
  } catch (e) {
    if (e instanceof RangeError) return undefined;
    throw e;
  }
  // The name as given (validated): Intl's canonical form can be a legacy alias (Asia/Calcutta).
  const zone: IntlZone = {
    name,
    format,
    slots: new Map(),
    shownOffset: (whole) => wallAsUtc(formattedWallTime(zone, whole)) - whole,
  };
  return zone;
}

/**
 * The process's own zone as `Date` shows it (V8 reads it from the same ICU data and the same TZ or
 * /etc/localtime as Intl does, with no formatter): valid only for the zone the process runs in.
 */
export function processZone(name: string): Zone {
  // From the local fields, not getTimezoneOffset(): its minutes are fractional for the local mean
  // times of odd seconds (St. John's until 1935: -3:30:52), and times 60,000 not exact.
  const shownOffset = (whole: number): number => {
    const d = new Date(whole);
    return (
      Date.UTC(d.getFullYear(), d.getMonth(), d.getDate(), d.getHours(), d.getMinutes(), d.getSeconds()) -
      whole
    );
  };
  return { name, slots: new Map(), shownOffset };
}

/** Names Intl shows as `UTC` (kept so: a report's output names the zone). */
const UTC_ALIASES = new Set([
  "Etc/UTC",
  "Etc/UCT",
  "Etc/Universal",
  "Etc/Zulu",
  "Etc/GMT",
  "Etc/GMT0",
  "Etc/GMT+0",
  "Etc/GMT-0",
  "Etc/Greenwich",
  "UTC",
  "UCT",
  "Universal",
  "Zulu",
  "GMT",
  "GMT0",
  "GMT+0",
  "GMT-0",
  "Greenwich",
]);

/**
 * The zone name of a /etc/localtime link target (`/usr/share/zoneinfo/Europe/Berlin`, macOS
 * `/var/db/timezone/zoneinfo/Europe/Berlin`), as ICU itself derives the machine's zone from it;
 * undefined when the target is not under a `zoneinfo/` directory.
 */
export function linkedZoneName(target: string): string | undefined {
  const at = target.lastIndexOf("/zoneinfo/");
  if (at < 0) return undefined;
  const name = target.slice(at + "/zoneinfo/".length);
  if (
    !/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name) ||
    name.startsWith("posix/") ||
    name.startsWith("right/")
  )
    return undefined;
  return UTC_ALIASES.has(name) ? "UTC" : name;
}

/** Where the machine's zone is linked (the dependency of localZone, injectable for tests). */
export interface LocalZoneSources {
  readonly env: NodeJS.ProcessEnv;
  /** The /etc/localtime link's target, or undefined (no link: a copied file, Windows). */
  readonly localtimeLink: () => string | undefined;
}

function readLocaltimeLink(): string | undefined {
  try {
    return readlinkSync("/etc/localtime");
  } catch {
    // No link (absent, a plain copy, Windows): Intl resolves the zone instead, nothing is lost.
    return undefined;
  }
}

/**
 * The machine's zone: TZ when it names a zone (as typed: Intl would turn Asia/Kolkata into its
 * legacy alias Asia/Calcutta); with no TZ, the zone /etc/localtime links to, read from `Date`
 * (no Intl start-up); otherwise what Intl resolves.
 */
export function localZone(
  src: LocalZoneSources = { env: process.env, localtimeLink: readLocaltimeLink },
): Zone {
  const tz = src.env.TZ?.trim();
  if (tz) {
    const z = zoneNamed(tz);
    if (z !== undefined) return z;
  } else if (tz === undefined) {
    const target = src.localtimeLink();
    const name = target === undefined ? undefined : linkedZoneName(target);
    if (name !== undefined) return processZone(name);
  }
  const resolved = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return zoneNamed(resolved) ?? (zoneNamed("UTC") as IntlZone);
}

/** The wall-clock time of instant `ms` in `zone` (to the second), from Intl itself: the reference. */
export function formattedWallTime(zone: IntlZone, ms: number): WallTime {
  const p: Record<string, number> = {};
  for (const part of zone.format.formatToParts(ms)) {
    if (part.type !== "literal") p[part.type] = Number(part.value);
  }
  return {
    year: p.year ?? 0,
    month: p.month ?? 1,
    day: p.day ?? 1,
    hour: p.hour ?? 0,
    minute: p.minute ?? 0,
    second: p.second ?? 0,
  };
}

/** The wall-clock time of instant `ms` in `zone` (to the second): UTC fields of `ms` + offset. */
export function wallTime(zone: Zone, ms: number): WallTime {
  const t = new Date(Math.floor(ms / 1000) * 1000 + offsetMs(zone, ms));
  return {
    year: t.getUTCFullYear(),
    month: t.getUTCMonth() + 1,
    day: t.getUTCDate(),
    hour: t.getUTCHours(),
    minute: t.getUTCMinutes(),
    second: t.getUTCSeconds(),
  };
}

function wallAsUtc(w: WallTime): number {
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
}

function slotOffsets(zone: Zone, slot: number): SlotOffsets {
  const first = slot * SLOT_MS;
  const last = first + SLOT_MS - 1000;
  const before = zone.shownOffset(first);
  const after = zone.shownOffset(last);
  if (before === after) return { before, changeAt: Number.POSITIVE_INFINITY, after };
  // The first second showing `after`: in (first, last].
  let lo = first;
  let hi = last;
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    if (zone.shownOffset(mid) === after) hi = mid;
    else lo = mid;
  }
  return { before, changeAt: hi, after };
}

/** The zone's offset from UTC at instant `ms`, in ms (east positive: +05:30 is 19,800,000). */
export function offsetMs(zone: Zone, ms: number): number {
  const whole = Math.floor(ms / 1000) * 1000;
  const slot = Math.floor(whole / SLOT_MS);
  let s = zone.slots.get(slot);
  if (s === undefined) {
    s = slotOffsets(zone, slot);
    zone.slots.set(slot, s);
  }
  return whole < s.changeAt ? s.before : s.after;
}

function sameWall(a: WallTime, b: WallTime): boolean {
  return (
    a.year === b.year &&
    a.month === b.month &&
    a.day === b.day &&
    a.hour === b.hour &&
    a.minute === b.minute &&
    a.second === b.second
  );
}

/**
 * The instant at which `zone`'s clocks show `w`. A time shown twice (clocks set back) is its
 * first occurrence; a time never shown (clocks set forward) is moved forward by the gap, so a
 * day whose midnight is skipped starts when its first hour does ("compatible", as in Temporal).
 */
export function instantOf(zone: Zone, w: WallTime): number {
  const guess = wallAsUtc(w);
  // The offsets before and after any transition near this time (zones change at most once a day).
  const offsets = [...new Set([offsetMs(zone, guess - DAY_MS), offsetMs(zone, guess + DAY_MS)])];
  const hits = offsets.map((o) => guess - o).filter((t) => sameWall(wallTime(zone, t), w));
  if (hits.length > 0) return Math.min(...hits);
  return guess - (offsets[0] ?? 0);
}

/** `d` moved by `n` calendar days. */
export function addDays(d: LocalDate, n: number): LocalDate {
  const t = new Date(Date.UTC(d.year, d.month - 1, d.day + n));
  return { year: t.getUTCFullYear(), month: t.getUTCMonth() + 1, day: t.getUTCDate() };
}

/** ISO weekday: 1 = Monday ... 7 = Sunday. */
export function isoWeekday(d: LocalDate): number {
  const w = new Date(Date.UTC(d.year, d.month - 1, d.day)).getUTCDay();
  return w === 0 ? 7 : w;
}

/** The instant `zone`'s day `d` begins. */
export function startOfDay(zone: Zone, d: LocalDate): number {
  return instantOf(zone, { ...d, hour: 0, minute: 0, second: 0 });
}

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** `YYYY-MM-DD`. */
export function formatDate(d: LocalDate): string {
  return `${pad(d.year, 4)}-${pad(d.month)}-${pad(d.day)}`;
}

/** `YYYY-MM-DD HH:MM` of instant `ms` in `zone`. */
export function formatWall(zone: Zone, ms: number): string {
  const w = wallTime(zone, ms);
  return `${formatDate(w)} ${pad(w.hour)}:${pad(w.minute)}`;
}
