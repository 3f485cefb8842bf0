/**
 * `report` and the activity (docs/report.md): active time (the user's and the agent's, seconds),
 * commits and pull requests, for every `--by` (a per-tool view has them in the totals only: they
 * have no tool), in the table, JSON and CSV; the rows sum to the totals; a window places them by
 * their time.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { DeliveryRecord } from "../../src/adapter/types.ts";
import type { PriceTable } from "../../src/cost/lookup.ts";
import type { Ledger } from "../../src/ledger/ledger.ts";
import { renderCsv } from "../../src/report/csv.ts";
import { GROUP_DIMS, type GroupDim } from "../../src/report/dims.ts";
import { buildReport, renderTable } from "../../src/report/report.ts";
import { type Zone, zoneNamed } from "../../src/report/time/zone.ts";
import { type TempLedger, tempLedger } from "../export/helpers/ledger.ts";
import { type Gap, timelines } from "../helpers/active-time.ts";
import { event, finalObservation } from "../helpers/events.ts";

let t: TempLedger | undefined;
afterEach(() => {
  t?.dispose();
  t = undefined;
});

const NO_PRICES: PriceTable = {
  source: "none",
  byProvider: new Map(),
  providerAliases: new Map(),
  vendorPrefixes: new Map(),
  preferredProviders: [],
  anyProvider: new Map(),
};
const DAY = 24 * 3600_000;
const T0 = Date.UTC(2026, 10, 2, 12);
const UTC = zoneNamed("UTC") as Zone;

interface Filled {
  readonly gaps: Gap[];
  readonly deliveries: DeliveryRecord[];
}

/** Three sessions over three days, two projects; session 2 has activity but no usage event. */
function fill(): Filled {
  t = tempLedger();
  const out: Filled = { gaps: [], deliveries: [] };
  for (let s = 0; s < 3; s++) {
    const sessionId = `s${s}`;
    const path = `/s/${sessionId}/${sessionId}.messages.json`;
    const source = { adapterId: "cline", path, origin: "walk" as const, hint: {} };
    const ts = T0 + s * DAY;
    const project = s === 2 ? "/work/b" : "/work/a";
    const common = {
      sessionId,
      agent: "lead",
      model: "m",
      provider: "p",
      project,
      sourcePath: path,
      client: "cli",
    };
    const paid = event(`m${s}`, {
      dedupKey: `cline|${sessionId}|lead|m${s}`,
      sessionId,
      timestampMs: ts,
      project,
      sourcePath: path,
      model: "m",
      provider: "p",
      client: "cli",
    });
    const gaps: Gap[] = [
      {
        ...common,
        streamKey: `${sessionId}|a`,
        type: "agent",
        startMs: ts,
        durationMs: 90_000 + s * 1_000,
      },
      {
        ...common,
        streamKey: `${sessionId}|a`,
        type: "user",
        startMs: ts + 1,
        durationMs: 4_500,
      },
    ];
    const deliveries: DeliveryRecord[] = Array.from({ length: s + 1 }, (_, i) => ({
      ...common,
      deliveryKey: `${sessionId}|c|${i}`,
      callKey: `${sessionId}|c`,
      kind: i === 2 ? "pull_request" : "commit",
      toolName: "run_commands",
      timestampMs: ts,
    }));
    t.ledger.commit({
      ...finalObservation(s === 2 ? [] : [paid], [], 100, source),
      activeTime: timelines(gaps),
      deliveries,
    });
    out.gaps.push(...gaps);
    out.deliveries.push(...deliveries);
  }
  return out;
}

const ledgerOf = (): Ledger => (t as TempLedger).ledger;

function want(f: Filled, session?: string) {
  const g = f.gaps.filter((x) => session === undefined || x.sessionId === session);
  const d = f.deliveries.filter((x) => session === undefined || x.sessionId === session);
  return {
    activeUserSeconds: g.filter((x) => x.type === "user").reduce((n, x) => n + x.durationMs, 0) / 1000,
    activeAgentSeconds: g.filter((x) => x.type === "agent").reduce((n, x) => n + x.durationMs, 0) / 1000,
    commits: d.filter((x) => x.kind === "commit").length,
    pullRequests: d.filter((x) => x.kind === "pull_request").length,
  };
}

const KEYS = ["activeUserSeconds", "activeAgentSeconds", "commits", "pullRequests"] as const;

describe("report: active time, commits, pull requests", () => {
  it("totals", () => {
    const f = fill();
    expect(buildReport(ledgerOf(), [], NO_PRICES, { zone: UTC }).totals).toMatchObject(want(f));
  });

  it.each(
    GROUP_DIMS.filter((d) => d !== "tool").map((d) => [d]),
  )("--by %s: the rows sum to the totals", (dim) => {
    const f = fill();
    const r = buildReport(ledgerOf(), [dim as GroupDim], NO_PRICES, { zone: UTC });
    for (const k of KEYS)
      expect(
        r.rows.reduce((n, row) => n + row[k], 0),
        `${dim} ${k}`,
      ).toBeCloseTo(want(f)[k], 9);
  });

  it("--by tool: in the totals only (activity has no tool)", () => {
    const f = fill();
    const r = buildReport(ledgerOf(), ["tool"], NO_PRICES, { zone: UTC });
    expect(r.totals).toMatchObject(want(f));
    expect(r.rows.every((row) => row.commits === 0)).toBe(true);
  });

  it("--by session: a session without usage events still shows its activity; a window by time", () => {
    const f = fill();
    const s2 = buildReport(ledgerOf(), ["session"], NO_PRICES, { zone: UTC }).rows.find(
      (r) => r.session === "s2",
    );
    expect(s2).toMatchObject({ events: 0, ...want(f, "s2") });
    const day2 = buildReport(ledgerOf(), [], NO_PRICES, { zone: UTC, fromMs: T0 + DAY, toMs: T0 + 2 * DAY });
    expect(day2.totals).toMatchObject(want(f, "s1"));
  });

  it("table and CSV carry them", () => {
    fill();
    const r = buildReport(ledgerOf(), ["project"], NO_PRICES, { zone: UTC });
    expect(renderTable(r)).toMatch(/Active user\s+Active agent\s+Commits\s+PRs/);
    expect(renderTable(r)).toMatch(/4m 33s/); // 273 s of the agent's time in all
    const csv = renderCsv(r).split("\n");
    expect(csv[0]).toMatch(
      /,unpricedEvents,activeUserSeconds,activeAgentSeconds,commits,pullRequests,linesAdded,/,
    );
  });
});
