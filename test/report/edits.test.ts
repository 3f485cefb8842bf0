/**
 * `report` and the file edits (docs/report.md "What Cline delivered"): lines added and removed by
 * accepted edits, edits accepted, rejected and failed, and the acceptance rate (accepted /
 * (accepted + rejected); failed in neither), for every `--by`, in the table, JSON and CSV; the
 * rows sum to the totals, edits of a group without usage make a row of their own, and a window
 * places edits by their message time.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { EditRecord } from "../../src/adapter/types.ts";
import { printReport } from "../../src/cli/report-output.ts";
import type { PriceTable } from "../../src/cost/lookup.ts";
import type { Ledger } from "../../src/ledger/ledger.ts";
import { renderCsv } from "../../src/report/csv.ts";
import { GROUP_DIMS, type GroupDim } from "../../src/report/dims.ts";
import { acceptanceRate, buildReport, renderTable } from "../../src/report/report.ts";
import { type Zone, zoneNamed } from "../../src/report/time/zone.ts";
import { type TempLedger, tempLedger } from "../export/helpers/ledger.ts";
import { call, edit, event, finalObservation, withEdits } from "../helpers/events.ts";

let t: TempLedger | undefined;
afterEach(() => {
  t?.dispose();
  t = undefined;
});

/** A price table that knows no model: every cost unknown (the edits do not need prices). */
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

/** Three sessions over three days and two projects, edits of every decision; one session's edits have no event. */
function fill(): EditRecord[] {
  t = tempLedger();
  const all: EditRecord[] = [];
  for (let s = 0; s < 3; s++) {
    const sessionId = `s${s}`;
    const path = `/s/${sessionId}/${sessionId}.messages.json`;
    const source = { adapterId: "cline", path, origin: "walk" as const, hint: {} };
    const ts = T0 + s * DAY;
    const project = s === 2 ? "/work/b" : "/work/a";
    const paid = event(`m${s}`, {
      dedupKey: `cline|${sessionId}|lead|m${s}`,
      sessionId,
      toolCallCount: 1,
      timestampMs: ts,
      project,
      sourcePath: path,
      client: s === 1 ? "vscode" : "cli",
    });
    // Session 2's call has no paying event (its message had no metrics): its edits still count.
    const c = call(`c${s}`, s === 2 ? "" : paid.dedupKey, 1, {
      callKey: `cline|${sessionId}|lead|c${s}`,
      sessionId,
      toolName: s === 1 ? "apply_patch" : "editor",
      timestampMs: ts,
      project,
      sourcePath: path,
      client: paid.client ?? "",
    });
    const edits = [
      edit(c, { linesAdded: 10 + s, linesRemoved: s }),
      edit(c, { decision: "rejected", source: "user", linesAdded: 4, linesRemoved: 2 }, 1),
      edit(c, { decision: "failed", source: "unknown", linesAdded: 0, linesRemoved: 0 }, 2),
      ...(s === 0 ? [edit(c, { linesAdded: 1, exact: false, operation: "create" }, 3)] : []),
    ];
    t.ledger.commit(withEdits(finalObservation(s === 2 ? [] : [paid], [c], 100, source), edits));
    all.push(...edits);
  }
  return all;
}

const ledgerOf = (): Ledger => (t as TempLedger).ledger;

function want(edits: readonly EditRecord[]) {
  const accepted = edits.filter((e) => e.decision === "accepted");
  return {
    linesAdded: accepted.reduce((n, e) => n + e.linesAdded, 0),
    linesRemoved: accepted.reduce((n, e) => n + e.linesRemoved, 0),
    editsAccepted: accepted.length,
    editsRejected: edits.filter((e) => e.decision === "rejected").length,
    editsFailed: edits.filter((e) => e.decision === "failed").length,
  };
}

const EDIT_KEYS = ["linesAdded", "linesRemoved", "editsAccepted", "editsRejected", "editsFailed"] as const;

describe("report: what Cline delivered", () => {
  it("totals: accepted lines, edits by decision, and the rate without the failed ones", () => {
    const edits = fill();
    const r = buildReport(ledgerOf(), [], NO_PRICES, { zone: UTC });
    const w = want(edits);
    expect(r.totals).toMatchObject(w);
    expect(acceptanceRate(r.totals)).toBeCloseTo(w.editsAccepted / (w.editsAccepted + w.editsRejected), 12);
  });

  it.each(GROUP_DIMS.map((d) => [d]))("--by %s: the rows sum to the totals", (dim) => {
    const edits = fill();
    const r = buildReport(ledgerOf(), [dim as GroupDim], NO_PRICES, { zone: UTC });
    for (const k of EDIT_KEYS)
      expect(
        r.rows.reduce((n, row) => n + row[k], 0),
        `${dim} ${k}`,
      ).toBe(want(edits)[k]);
    // Every group with an edit has its own numbers (not the whole total on one row).
    if (dim === "session" || dim === "day" || dim === "tool")
      expect(r.rows.filter((row) => row.editsAccepted > 0).length).toBeGreaterThan(1);
  });

  it("--by session: a session whose messages had no metrics still shows its edits", () => {
    const edits = fill();
    const r = buildReport(ledgerOf(), ["session"], NO_PRICES, { zone: UTC });
    const s2 = r.rows.find((row) => row.session === "s2");
    expect(s2).toMatchObject({ events: 0, ...want(edits.filter((e) => e.sessionId === "s2")) });
  });

  it("a window counts the edits of its message times only", () => {
    const edits = fill();
    const r = buildReport(ledgerOf(), [], NO_PRICES, {
      zone: UTC,
      fromMs: T0 + DAY,
      toMs: T0 + 2 * DAY,
    });
    expect(r.totals).toMatchObject(want(edits.filter((e) => e.sessionId === "s1")));
  });

  it("table, JSON and CSV carry them; the rate is per row, never summed", () => {
    const edits = fill();
    const r = buildReport(ledgerOf(), ["project"], NO_PRICES, { zone: UTC });
    const table = renderTable(r);
    expect(table).toMatch(/Lines \+\s+Lines -\s+Accepted\s+Rejected\s+Accept rate/);
    const w = want(edits);
    const rate = w.editsAccepted / (w.editsAccepted + w.editsRejected);
    expect(table.split("\n").find((l) => l.startsWith("Total"))).toContain(`${(rate * 100).toFixed(1)}%`);
    const csv = renderCsv(r).trimEnd().split("\n");
    const head = (csv[0] ?? "").split(",");
    expect(head.slice(-6)).toEqual([...EDIT_KEYS, "acceptanceRate"]);
    const a = (csv.find((l) => l.startsWith("/work/a,")) ?? "").split(",");
    const wa = want(edits.filter((e) => e.project === "/work/a"));
    expect(a.slice(-6).map(Number)).toEqual([
      ...EDIT_KEYS.map((k) => wa[k]),
      wa.editsAccepted / (wa.editsAccepted + wa.editsRejected),
    ]);
    const view = {
      by: ["project" as GroupDim],
      zone: UTC,
      fromMs: undefined,
      toMs: undefined,
      format: "json" as const,
      sort: undefined,
      top: undefined,
      budget: undefined,
      isDefault: false,
      nowMs: T0,
    };
    const body = JSON.parse(printReport(view, r).text);
    expect(body.totals).toMatchObject({ ...w, acceptanceRate: rate });
    for (const row of body.rows)
      expect(row.acceptanceRate).toBeCloseTo(row.editsAccepted / (row.editsAccepted + row.editsRejected), 12);
  });

  it("a report without edits keeps its table and reads an empty rate", () => {
    t = tempLedger();
    t.ledger.commit(finalObservation([event("m1", { timestampMs: T0 })]));
    const r = buildReport(t.ledger, [], NO_PRICES, { zone: UTC });
    expect(renderTable(r)).not.toMatch(/Accept rate/);
    expect(acceptanceRate(r.totals)).toBeUndefined();
    expect(renderCsv(r).trimEnd().split("\n")[1]?.endsWith(",0,0,0,0,0,")).toBe(true);
  });
});
