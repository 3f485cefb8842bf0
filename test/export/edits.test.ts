/**
 * cline.lines_of_code and cline.code_edit.decisions (docs/metrics.md "What Cline delivered")
 * through the real SDK reader, from edits of many sessions with every decision, source,
 * operation and exactness: every path (cumulative whole, in pages of one row, folded with the
 * session id off, folded in pages, delta in small windows) delivers exactly the totals of the
 * edits committed, each attribute set once per cumulative export, lines only for accepted and
 * rejected edits; a document read again adds nothing.
 */
import type { DataPoint } from "@opentelemetry/sdk-metrics";
import { afterEach, describe, expect, it } from "vitest";
import type { EditRecord } from "../../src/adapter/types.ts";
import { ATTR, seriesKey } from "../../src/export/attributes.ts";
import { POINTS_PER_ROW } from "../../src/export/pages.ts";
import { METRICS } from "../../src/export/translate.ts";
import type { Ledger } from "../../src/ledger/ledger.ts";
import { call, edit, event, finalObservation, withEdits } from "../helpers/events.ts";
import { type TempLedger, tempLedger } from "./helpers/ledger.ts";
import { type Harness, harness } from "./helpers/sdk.ts";

let t: TempLedger | undefined;
let h: Harness | undefined;
afterEach(async () => {
  await h?.shutdown();
  h = undefined;
  t?.dispose();
  t = undefined;
});

const DECISIONS = ["accepted", "rejected", "failed"] as const;
const SOURCES = ["auto", "user", "unknown"] as const;
const OPERATIONS = ["create", "modify", "delete"] as const;
const LANGUAGES = ["typescript", "python", "other"];

/** Sessions of edits varying every dimension (deterministic), committed as their documents. */
function fill(l: Ledger, sessions = 12): EditRecord[] {
  const now = Date.now();
  const all: EditRecord[] = [];
  for (let s = 0; s < sessions; s++) {
    const sessionId = `s${s}`;
    const path = `/s/${sessionId}/${sessionId}.messages.json`;
    const source = { adapterId: "cline", path, origin: "walk" as const, hint: {} };
    const paid = event(`m${s}`, {
      dedupKey: `cline|${sessionId}|lead|m${s}`,
      sessionId,
      toolCallCount: 2,
      timestampMs: now,
      sourcePath: path,
      project: `/work/p${s % 3}`,
      client: "cli",
    });
    const calls = [0, 1].map((c) =>
      call(`c${s}_${c}`, paid.dedupKey, 2, {
        callKey: `cline|${sessionId}|lead|c${c}`,
        sessionId,
        toolName: c === 0 ? "editor" : "apply_patch",
        timestampMs: now,
        sourcePath: path,
        project: paid.project,
        client: "cli",
      }),
    );
    const edits: EditRecord[] = [];
    for (const [ci, c] of calls.entries())
      for (let n = 0; n < 3; n++) {
        const k = s * 7 + ci * 3 + n;
        const decision = DECISIONS[k % 3] as (typeof DECISIONS)[number];
        edits.push(
          edit(
            c,
            {
              toolName: c.toolName,
              decision,
              source: SOURCES[(k >> 1) % 3] as (typeof SOURCES)[number],
              operation: OPERATIONS[(k >> 2) % 3] as (typeof OPERATIONS)[number],
              language: LANGUAGES[k % LANGUAGES.length] as string,
              linesAdded: decision === "failed" ? 0 : (k * 13) % 41,
              linesRemoved: decision === "failed" ? 0 : (k * 7) % 17,
              exact: k % 5 !== 0,
            },
            n,
          ),
        );
      }
    const obs = withEdits(finalObservation([paid], calls, 100, source), edits);
    l.commit(obs);
    // Read again (a rewrite, a restart): the same edit keys, nothing new.
    l.commit({ ...obs, checkpoint: { ...obs.checkpoint, size: 101 } });
    all.push(...edits);
  }
  return all;
}

/** What the edits say, by the attributes the dashboards sum over. */
function expected(edits: readonly EditRecord[]) {
  const lines = new Map<string, number>();
  const decisions = new Map<string, number>();
  const put = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  for (const e of edits) {
    put(decisions, `${e.decision}|${e.source}|${e.operation}|${e.toolName}|${e.language}`, 1);
    if (e.decision === "failed") continue;
    put(lines, `${e.decision}|added|${e.exact}`, e.linesAdded);
    put(lines, `${e.decision}|removed|${e.exact}`, e.linesRemoved);
  }
  return { lines, decisions };
}

function observed(lines: readonly DataPoint<number>[], decisions: readonly DataPoint<number>[]) {
  const out = { lines: new Map<string, number>(), decisions: new Map<string, number>() };
  const put = (m: Map<string, number>, k: string, v: number) => {
    if (v !== 0) m.set(k, (m.get(k) ?? 0) + v);
  };
  for (const p of lines) {
    const a = p.attributes;
    put(out.lines, `${a[ATTR.decision]}|${a[ATTR.type]}|${a[ATTR.linesExact]}`, p.value);
  }
  for (const p of decisions) {
    const a = p.attributes;
    put(
      out.decisions,
      `${a[ATTR.decision]}|${a[ATTR.source]}|${a[ATTR.operation]}|${a[ATTR.toolName]}|${a[ATTR.language]}`,
      p.value,
    );
  }
  return out;
}

const withoutZeros = (m: Map<string, number>) => new Map([...m].filter(([, v]) => v !== 0));

const CUMULATIVE = {
  whole: {},
  "in pages of one row": { pagePoints: POINTS_PER_ROW, maxPointsPerRequest: POINTS_PER_ROW },
  "session id off (folded)": { translate: { includeSessionId: false } },
  "session id off, project basename, in pages": {
    translate: { includeSessionId: false, project: "basename" as const },
    pagePoints: POINTS_PER_ROW,
    maxPointsPerRequest: POINTS_PER_ROW,
  },
} as const;

describe("cline.lines_of_code and cline.code_edit.decisions", () => {
  for (const [name, opts] of Object.entries(CUMULATIVE)) {
    it(`cumulative, ${name}: the totals of the edits, each attribute set once`, async () => {
      t = tempLedger();
      const edits = fill(t.ledger);
      h = harness(t.ledger, { temporality: "cumulative", ...opts });
      await h.flush();
      const lines = h.lastPoints(METRICS.linesOfCode.name);
      const decisions = h.lastPoints(METRICS.editDecisions.name);
      const want = expected(edits);
      const got = observed(lines, decisions);
      expect(got.lines).toEqual(withoutZeros(want.lines));
      expect(got.decisions).toEqual(want.decisions);
      for (const points of [lines, decisions]) {
        const keys = points.map((p) => seriesKey(p.attributes as Record<string, string>));
        expect(new Set(keys).size, "an attribute set twice in one export").toBe(keys.length);
      }
      // A failed edit changed nothing: no lines of it.
      expect(lines.some((p) => p.attributes[ATTR.decision] === "failed")).toBe(false);
      expect(decisions.some((p) => p.attributes[ATTR.decision] === "failed")).toBe(true);
      // The exact=false part is there (inexact edits were committed).
      expect(lines.some((p) => p.attributes[ATTR.linesExact] === "false")).toBe(true);
    });
  }

  it("delta in windows of at most 5 edits (whole packs: a document's edits of one tool): every window once, the sum the edits' totals", async () => {
    t = tempLedger();
    const edits = fill(t.ledger);
    h = harness(t.ledger, { temporality: "delta", maxWindowCalls: 5, maxWindowEvents: 5 });
    for (let i = 0; i < 40 && (i === 0 || h.producer.backlog()); i++) await h.flush();
    expect(h.producer.backlog()).toBe(false);
    const got = observed(h.allPoints(METRICS.linesOfCode.name), h.allPoints(METRICS.editDecisions.name));
    const want = expected(edits);
    expect(got.lines).toEqual(withoutZeros(want.lines));
    expect(got.decisions).toEqual(want.decisions);
    // A document's three edits of each tool are one pack (schema v6): 24 windows of one pack each.
    expect(t.ledger.maxEditId()).toBe(24);
    expect(t.ledger.getExportState("memory").editWatermark).toBe(24);
  });

  it("an idle cumulative export after delivery sends no old edit series again (the TTL judges by edit time)", async () => {
    t = tempLedger();
    const old = Date.now() - 30 * 24 * 3600_000;
    const c = call("c1", "", 1, { timestampMs: old });
    t.ledger.commit(withEdits(finalObservation([], [c]), [edit(c, { timestampMs: old })]));
    // A change in the same millisecond as a collection's read counts as after it (sent again, which a
    // cumulative value allows): step past it, as activity.test.ts does. (Without the step this failed
    // once, in a clean clone's clock-ahead run.)
    await new Promise((r) => setTimeout(r, 5));
    h = harness(t.ledger, { temporality: "cumulative", ttlMs: 7 * 24 * 3600_000 });
    await h.flush();
    expect(h.lastPoints(METRICS.editDecisions.name)).toHaveLength(1);
    await h.flush();
    expect(h.lastPoints(METRICS.editDecisions.name)).toHaveLength(0);
  });
});
