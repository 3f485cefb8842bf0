/**
 * `report` time ranges, zones, weeks and months, CSV, --top/--sort, the default view and
 * --budget, through the real CLI over a Cline tree whose message times are chosen here.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.ts";
import { makeTree, type SessionSpec } from "../helpers/cline-tree.ts";

const M = (i: number, o: number, r = 0, w = 0) => ({
  inputTokens: i,
  outputTokens: o,
  cacheReadTokens: r,
  cacheWriteTokens: w,
});
const SONNET = { model: "claude-sonnet-4-5-20250929", provider: "anthropic" };
/** $3/$15/$0.30/$3.75 per M: 221 in, 323 out, 7002 read, 729 write. */
const SONNET_COST = 0.01034235;
const t = (iso: string) => Date.parse(iso);

// Fixed history, around Kolkata's (+05:30) day boundary 2026-11-29T18:30Z and a Monday.
const FIXED: SessionSpec[] = [
  {
    id: "1796000000000_alpha",
    cwd: "/work/alpha",
    messages: [
      { id: "a1", metrics: M(100, 10), ts: t("2026-11-29T18:29:59Z"), ...SONNET }, // Kolkata 11-29 23:59:59
      { id: "a2", metrics: M(200, 20), ts: t("2026-11-29T18:30:00Z"), ...SONNET }, // Kolkata 11-30 00:00
      { id: "a3", metrics: M(400, 40), ts: t("2026-11-30T18:29:59Z") }, // Kolkata 11-30 23:59:59, unpriced
      { id: "a4", metrics: M(800, 80), ts: t("2026-11-30T18:30:00Z"), ...SONNET }, // Kolkata 12-01
    ],
  },
  {
    id: "1796000000001_beta",
    cwd: "/work/beta",
    messages: [
      { id: "b1", metrics: M(1000, 100), ts: t("2026-10-31T12:00:00Z"), tools: ["editor"], ...SONNET },
      { id: "b2", metrics: M(2000, 200), ts: t("2026-11-23T12:00:00Z"), ...SONNET },
    ],
  },
  {
    id: "1796000000002_gamma",
    cwd: '/work/gamma,quoted "name"',
    messages: [{ id: "g1", metrics: M(50, 5), ts: t("2026-11-30T06:00:00Z"), ...SONNET }],
  },
];

/** A zone where it is now between 08:00 and 16:00, so "now - 2 h" is still today there. */
function middayZone(now: number): string {
  for (const z of [
    "Pacific/Kiritimati",
    "Asia/Tokyo",
    "Asia/Kolkata",
    "Europe/Berlin",
    "UTC",
    "America/New_York",
    "America/Los_Angeles",
    "Pacific/Honolulu",
  ]) {
    const hour = Number(
      new Intl.DateTimeFormat("en-US", { timeZone: z, hour: "2-digit", hourCycle: "h23" }).format(now),
    );
    if (hour >= 8 && hour < 16) return z;
  }
  throw new Error("no zone at midday (impossible: the list spans every 5 hours)");
}

let dir: string;
let fixedEnv: Record<string, string>;
let recentEnv: Record<string, string>;
let unpricedEnv: Record<string, string>;
let zone: string;
const NOW = Date.now();
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "report-range-"));
  fixedEnv = { HOME: makeTree(join(dir, "fixed"), FIXED).home, CLINE_OTEL_STATE_DIR: join(dir, "s1") };
  zone = middayZone(NOW);
  const recent: SessionSpec[] = [
    {
      id: "1796000000003_recent",
      cwd: "/work/recent",
      messages: [
        { id: "r1", metrics: M(7952, 323, 7002, 729), ts: NOW - 2 * 3_600_000, ...SONNET },
        { id: "r2", metrics: M(7952, 323, 7002, 729), ts: NOW - 3_600_000, ...SONNET },
        { id: "old", metrics: M(7952, 323, 7002, 729), ts: NOW - 40 * 86_400_000, ...SONNET },
      ],
    },
  ];
  recentEnv = {
    HOME: makeTree(join(dir, "recent"), recent).home,
    CLINE_OTEL_STATE_DIR: join(dir, "s2"),
    TZ: zone,
  };
  const unpriced: SessionSpec[] = [
    {
      id: "1796000000004_unpriced",
      cwd: "/w",
      messages: [{ id: "u1", metrics: M(10, 1), ts: NOW - 3_600_000 }],
    },
  ];
  unpricedEnv = {
    HOME: makeTree(join(dir, "unpriced"), unpriced).home,
    CLINE_OTEL_STATE_DIR: join(dir, "s3"),
    // Midday there, as for recentEnv: an hour ago is today whenever the test runs (near 00:00 UTC too).
    TZ: zone,
  };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function json(args: string[], env = fixedEnv) {
  const r = runCli(["report", "--json", ...args], env);
  if (r.status !== 0) throw new Error(`report ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout) as {
    rows: Record<string, string | number>[];
    totals: Record<string, number>;
    others?: Record<string, number>;
    window?: { from: string; to: string; timeZone: string };
    budget?: Record<string, unknown>;
  };
}

describe("report --since/--until/--timezone", () => {
  it("a date is a whole day of the zone, both ends inclusive (+05:30)", () => {
    const r = json(["--since", "2026-11-30", "--until", "2026-11-30", "--timezone", "Asia/Kolkata"]);
    // a2 (00:00:00), g1 and a3 (23:59:59) are Kolkata's 2026-11-30; a1 and a4 are not.
    expect(r.totals).toMatchObject({ input: 200 + 50 + 400, events: 3, unpricedEvents: 1 });
    expect(r.window).toEqual({
      from: "2026-11-29T18:30:00.000Z",
      to: "2026-11-30T18:30:00.000Z",
      timeZone: "Asia/Kolkata",
    });
  });

  it("the same dates in UTC cover other messages", () => {
    const r = json(["--since", "2026-11-30", "--until", "2026-11-30", "--timezone", "UTC"]);
    expect(r.totals).toMatchObject({ input: 50 + 400 + 800, events: 3 });
  });

  it("date-times are local to the zone, or absolute with an offset", () => {
    const local = json([
      "--since",
      "2026-11-30T00:00",
      "--until",
      "2026-11-30T11:31",
      "--timezone",
      "Asia/Kolkata",
    ]);
    // a2 at 00:00 and g1 at 11:30 local (06:00Z); a date-time --until is exclusive
    expect(local.totals).toMatchObject({ input: 200 + 50, events: 2 });
    const exclusive = json([
      "--since",
      "2026-11-30T00:00",
      "--until",
      "2026-11-30T11:30",
      "--timezone",
      "Asia/Kolkata",
    ]);
    expect(exclusive.totals).toMatchObject({ input: 200, events: 1 });
    const abs = json(["--since", "2026-11-29T18:30:00Z", "--until", "2026-11-29T18:30:00.001Z"]);
    expect(abs.totals).toMatchObject({ input: 200, events: 1 });
  });

  it("--by day, week and month label periods in the zone; weeks start on Monday", () => {
    const days = json(["--by", "day", "--timezone", "Asia/Kolkata"]);
    // Days of usage (active time may add a day of its own: a gap starting on a day without a response).
    expect(days.rows.filter((r) => (r.events as number) > 0).map((r) => [r.day, r.events])).toEqual([
      ["2026-10-31", 1],
      ["2026-11-23", 1],
      ["2026-11-29", 1],
      ["2026-11-30", 3],
      ["2026-12-01", 1],
    ]);
    const weeks = json(["--by", "week", "--timezone", "Asia/Kolkata"]);
    // 2026-11-29 is a Sunday: the week of Monday 11-23; 11-30 starts a new week.
    expect(weeks.rows.map((r) => [r.week, r.events])).toEqual([
      ["2026-10-26", 1],
      ["2026-11-23", 2],
      ["2026-11-30", 4],
    ]);
    const months = json(["--by", "month", "--timezone", "America/New_York"]);
    expect(months.rows.map((r) => [r.month, r.events])).toEqual([
      ["2026-10", 1],
      ["2026-11", 6],
    ]);
  });
});

describe("report --csv, --top, --sort", () => {
  it("this week by project as CSV: header, one row per group, numbers unformatted, unknown cost empty", () => {
    const r = runCli(
      [
        "report",
        "--since",
        "2026-11-30",
        "--until",
        "2026-12-06",
        "--timezone",
        "UTC",
        "--by",
        "project",
        "--csv",
      ],
      fixedEnv,
    );
    expect(r.status).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe(
      "project,input,output,cacheRead,cacheWrite,events,toolCalls,cost,unpricedEvents,activeUserSeconds,activeAgentSeconds,commits,pullRequests,linesAdded,linesRemoved,editsAccepted,editsRejected,editsFailed,acceptanceRate",
    );
    expect(lines.slice(1)).toEqual([
      // a3 -> a4: one second of the agent's time (a gap starting in the window).
      `/work/alpha,1200,120,0,0,2,0,${(800 * 3 + 80 * 15) / 1e6},1,0,1,0,0,0,0,0,0,0,`,
      `"/work/gamma,quoted ""name""",50,5,0,0,1,0,${(50 * 3 + 5 * 15) / 1e6},0,0,0,0,0,0,0,0,0,0,`,
    ]);
    const unknown = runCli(["report", "--csv", "--by", "project"], unpricedEnv);
    expect(unknown.stdout.trimEnd().split("\n")[1]).toBe("/w,10,1,0,0,1,0,,1,0,0,0,0,0,0,0,0,0,");
  });

  it("--top N --sort keeps the largest groups and sums the rest into one row", () => {
    const r = json(["--by", "project", "--top", "1", "--sort", "tokens", "--since", "2026-01-01"]);
    expect(r.rows.map((x) => x.project)).toEqual(["/work/beta"]);
    expect(r.others).toMatchObject({ groups: 2, input: 100 + 200 + 400 + 800 + 50 });
    expect(r.totals.input).toBe(3000 + 1550);
    const csv = runCli(
      ["report", "--by", "project", "--top", "1", "--csv", "--since", "2026-01-01"],
      fixedEnv,
    );
    const rows = csv.stdout.trimEnd().split("\n");
    expect(rows).toHaveLength(3);
    expect(rows[2]).toMatch(/^\(2 more\),1550,155,/);
    const byRequests = json(["--by", "project", "--sort", "requests", "--since", "2026-01-01"]);
    expect(byRequests.rows.map((x) => x.project)).toEqual([
      "/work/alpha",
      "/work/beta",
      '/work/gamma,quoted "name"',
    ]);
    const table = runCli(["report", "--by", "project", "--top", "2", "--since", "2026-01-01"], fixedEnv);
    expect(table.stdout).toMatch(/^\(1 more\)\s+50\s/m);
  });
});

describe("report with no flags: the last 30 days by day", () => {
  it("shows recent days in the local zone and leaves older history out", () => {
    const r = runCli(["report"], recentEnv);
    expect(r.status).toBe(0);
    const today = new Intl.DateTimeFormat("en-CA", { timeZone: zone }).format(NOW);
    expect(r.stdout).toMatch(new RegExp(`^Last 30 days: .* \\(${zone.replace("/", "\\/")}\\), by day$`, "m"));
    expect(r.stdout).toMatch(/^Day\s+Input\s+Output/m);
    // two messages today (221 uncached input each), the one of 40 days ago left out
    expect(r.stdout).toMatch(new RegExp(`^${today}\\s+442\\s`, "m"));
    expect(r.stdout).toMatch(/^Total\s+442\s/m);
    // --json keeps its contract: the whole ledger, for scripts
    expect(json([], recentEnv).totals.events).toBe(3);
  });
});

describe("what did I spend this week, by project, as CSV", () => {
  it("is one command", () => {
    const r = runCli(["report", "--since", "this-week", "--by", "project", "--csv"], recentEnv);
    expect(r.status, r.stderr).toBe(0);
    const [head, ...rows] = r.stdout.trimEnd().split("\n");
    expect(head).toBe(
      "project,input,output,cacheRead,cacheWrite,events,toolCalls,cost,unpricedEvents,activeUserSeconds,activeAgentSeconds,commits,pullRequests,linesAdded,linesRemoved,editsAccepted,editsRejected,editsFailed,acceptanceRate",
    );
    expect(rows).toHaveLength(1);
    const cells = (rows[0] ?? "").split(",");
    expect(cells.slice(0, 7)).toEqual(["/work/recent", "442", "646", "14004", "1458", "2", "0"]);
    expect(Number(cells[7])).toBeCloseTo(2 * SONNET_COST, 12);
  });
});

describe("report --budget --period", () => {
  it("prints spend, budget, what is left and the projection; exit 0 under, 3 over", () => {
    const under = runCli(["report", "--budget", "20", "--period", "day"], recentEnv);
    expect(under.status, under.stderr).toBe(0);
    expect(under.stdout).toMatch(/^Budget for this day \(\d{4}-\d\d-\d\d, /m);
    expect(under.stdout).toMatch(/^ {2}spent +\$0\.0207$/m);
    expect(under.stdout).toMatch(/^ {2}budget +\$20\.00$/m);
    expect(under.stdout).toMatch(/^ {2}left +\$19\.98$/m);
    expect(under.stdout).toMatch(
      /^ {2}projected +\$\d+\.\d{2,4} by \d{4}-\d\d-\d\d 00:00 at the rate so far$/m,
    );
    const over = runCli(["report", "--budget", "0.02", "--period", "week"], recentEnv);
    expect(over.status).toBe(3);
    expect(over.stdout).toMatch(/^OVER BUDGET: \$0\.0207 spent of \$0\.0200\.$/m);
    expect(over.stdout).toMatch(/^ {2}over by +\$0\.0007$/m);
    const b = runCli(["report", "--budget", "0.01", "--json"], recentEnv);
    expect(b.status).toBe(3);
    const body = JSON.parse(b.stdout);
    expect(body.budget).toMatchObject({
      period: "day",
      budget: 0.01,
      over: true,
      complete: true,
      timeZone: zone,
    });
    expect(body.budget.spent).toBeCloseTo(2 * SONNET_COST, 12);
    expect(body.budget.projected).toBeGreaterThan(body.budget.spent);
    expect(body.totals.events).toBe(2);
  });

  it("unpriced requests make the spend unknown, not zero", () => {
    const r = runCli(["report", "--budget", "5", "--period", "month"], unpricedEnv);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/spent +at least \$0\.00/);
    expect(r.stdout).toMatch(
      /1 request\(s\) used a model with no known price: their cost is unknown, not zero/,
    );
    expect(
      JSON.parse(runCli(["report", "--budget", "5", "--json"], unpricedEnv).stdout).budget,
    ).toMatchObject({
      complete: false,
      unpricedEvents: 1,
    });
  });
});

describe("report: bad input exits 2 with one line naming the flag", () => {
  it.each([
    [["--since", "last tuesday"], /^cline-otel: --since: cannot read "last tuesday"; it accepts a date/],
    [["--until", "2026-13-01"], /^cline-otel: --until: 2026-13-01 is not a calendar date; it accepts/],
    [
      ["--timezone", "Mars/Olympus"],
      /^cline-otel: --timezone: unknown time zone "Mars\/Olympus"; it accepts an IANA name/,
    ],
    [["--budget", "-5"], /^cline-otel: --budget: "-5" is not an amount; it accepts US dollars, 0 or more/],
    [["--budget", "lots"], /^cline-otel: --budget: "lots" is not an amount/],
    [
      ["--since", "2026-11-30", "--until", "2026-11-01"],
      /^cline-otel: --until: 2026-11-02 00:00 is not after --since 2026-11-30 00:00/,
    ],
    [["--top", "0"], /^cline-otel: --top: "0" is not a count; it accepts a whole number of rows, 1 or more/],
    [["--period", "week"], /^cline-otel: --period: needs --budget <USD>/],
    [
      ["--budget", "5", "--since", "7d"],
      /^cline-otel: --budget: covers the current --period; it cannot be combined with --since or --until/,
    ],
    [["--sort", "color"], /--sort.*cost, tokens, requests/],
    [["--period", "year", "--budget", "5"], /--period.*day, week, month/],
    [["--by", "year"], /--by.*day, week, month/],
    [["--csv", "--json"], /^cline-otel: --csv: cannot be combined with --json/],
    [["--captures", "--since", "7d"], /^cline-otel: --since: not available with --captures/],
  ])("%j", (args, message) => {
    const r = runCli(["report", "--no-collect", ...args], { ...fixedEnv, TZ: "UTC" });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr.trim()).toMatch(message);
    expect(r.stdout).toBe("");
  });
});
