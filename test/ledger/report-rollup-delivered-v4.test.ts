/**
 * Schema v4 (src/ledger/tables/report-rollup-delivered-v4.ts): what Cline delivered in the report
 * rollup, kept at insert time. The rollup-based edit and activity totals (`ReportQueries.summed`, what
 * `report` reads) equal a GROUP BY over the edit and activity rows (`grouped`) for random ledgers,
 * windows and groupings, through a re-read; a v3 ledger holding rows of every kind upgrades in place
 * with its rollup's delivered columns filled from its rows; a read-only view of a v3 ledger reports
 * from the rows.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DeliveryRecord, EditRecord, SessionStartRecord, Source } from "../../src/adapter/types.ts";
import { LEDGER_FILE, Ledger } from "../../src/ledger/ledger.ts";
import type {
  GroupKind,
  LedgerDim,
  ReportQueries,
  ReportWindow,
} from "../../src/ledger/rollups/report-queries.ts";
import { MIGRATIONS } from "../../src/ledger/schema.ts";
import { ROLLUP_BUCKET_MS } from "../../src/ledger/tables/report-rollup-v3.ts";
import { commitCaptures, requestCapture } from "../export/helpers/ledger.ts";
import { type Gap, timelines } from "../helpers/active-time.ts";
import { call, edit, event, finalObservation, observation } from "../helpers/events.ts";
import { reportWindow, windowsArb } from "../helpers/report-windows.ts";
import { columnsOf, ledgerAtVersion, tablesOf } from "../helpers/v1-ledger.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "rollup-v4-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const T0 = 1_796_000_000_000;
const src = (path: string): Source => ({ adapterId: "cline", path, origin: "walk", hint: {} });
const DIMS: readonly LedgerDim[] = ["bucket", "model", "provider", "project", "agent", "client", "session"];
const KINDS: readonly GroupKind[] = ["edits", "activity"];
const DECISIONS: readonly EditRecord["decision"][] = ["accepted", "rejected", "failed"];
const WHOLE: ReportWindow = { fromMs: Number.MIN_SAFE_INTEGER, toMs: Number.MAX_SAFE_INTEGER, bucketMs: 1 };

function expectSame(q: ReportQueries, kind: GroupKind, dims: readonly LedgerDim[], w: ReportWindow): void {
  expect(q.summed(kind, dims, w), `${kind} by ${dims.join(",")}`).toEqual(q.grouped(kind, dims, w));
}

interface Doc {
  readonly at: number;
  readonly dims: number;
  readonly edits: readonly { decision: EditRecord["decision"]; added: number; removed: number }[];
  readonly gaps: readonly { after: number; ms: number; user: boolean }[];
  readonly commits: number;
  readonly prs: number;
}

const docArb: fc.Arbitrary<Doc> = fc.record({
  // Across a few days, often right at a bucket's edge; some before 1970 (left to the edges).
  at: fc.oneof(
    fc.integer({ min: -2 * ROLLUP_BUCKET_MS, max: 3 * 86_400_000 }),
    fc.integer({ min: -3, max: 300 }).map((k) => k * ROLLUP_BUCKET_MS + (k % 3) - 1),
  ),
  dims: fc.nat({ max: 15 }),
  edits: fc.array(
    fc.record({
      decision: fc.constantFrom("accepted", "rejected", "failed"),
      added: fc.nat({ max: 500 }),
      removed: fc.nat({ max: 500 }),
    }),
    { maxLength: 4 },
  ),
  gaps: fc.array(
    fc.record({
      after: fc.nat({ max: 2 * ROLLUP_BUCKET_MS }),
      ms: fc.integer({ min: 1, max: 600_000 }),
      user: fc.boolean(),
    }),
    { maxLength: 4 },
  ),
  commits: fc.nat({ max: 2 }),
  prs: fc.nat({ max: 1 }),
});

/** The document's observation: a call per edit, and its activity (its own timeline, commits, start). */
function docObservation(d: Doc, i: number) {
  const ts = T0 + d.at;
  const dims = {
    model: `m${d.dims % 2}`,
    provider: `p${(d.dims >> 1) % 2}`,
    project: `/w${(d.dims >> 2) % 2}`,
    agent: (d.dims >> 3) % 2 === 0 ? "lead" : "subagent",
    client: i % 3 === 0 ? "cli" : "",
    sessionId: `s${i % 4}`,
  };
  const calls = d.edits.map((_, k) =>
    call(`c${i}_${k}`, "", 1, { ...dims, timestampMs: ts + k, toolName: "editor" }),
  );
  const edits = d.edits.map((e, k) =>
    edit(calls[k] as NonNullable<(typeof calls)[number]>, {
      decision: e.decision,
      linesAdded: e.added,
      linesRemoved: e.removed,
    }),
  );
  const base = { ...dims, sourcePath: `/s/${i}.messages.json` };
  let at = ts;
  const gaps: Gap[] = d.gaps.map((g) => {
    at += g.after;
    const r = {
      ...base,
      streamKey: `cline|${i}|active`,
      type: g.user ? "user" : "agent",
      startMs: at,
      durationMs: g.ms,
    } as const;
    at += g.ms;
    return r;
  });
  const deliveries: DeliveryRecord[] = [
    ...Array.from({ length: d.commits }, (_, n) => ["commit", n] as const),
    ...Array.from({ length: d.prs }, (_, n) => ["pull_request", n] as const),
  ].map(([kind, n]) => ({
    ...base,
    deliveryKey: `d${i}|${kind}|${n}`,
    callKey: `d${i}`,
    kind,
    toolName: "run_commands",
    timestampMs: ts + 10 * n,
  }));
  const sessionStarts: SessionStartRecord[] = [
    { ...base, startKey: `start${i}`, startType: "new", timestampMs: ts },
  ];
  return {
    ...finalObservation([], calls, 100 + i, src(`/s/${i}.messages.json`)),
    edits,
    activeTime: timelines(gaps),
    deliveries,
    sessionStarts,
  };
}

function fill(l: Ledger, docs: readonly Doc[], batch: number): void {
  const obs = docs.map(docObservation);
  for (let i = 0; i < obs.length; i += batch) l.commitAll(obs.slice(i, i + batch));
}

describe("report rollup of what Cline delivered (schema v4)", () => {
  it("summed equals a GROUP BY over the edit and activity rows, for random ledgers, windows and groupings", () => {
    let n = 0;
    fc.assert(
      fc.property(
        fc.array(docArb, { maxLength: 25 }),
        fc.integer({ min: 1, max: 6 }),
        windowsArb(DIMS, [ROLLUP_BUCKET_MS, 4 * ROLLUP_BUCKET_MS, 86_400_000, 1000], 5),
        (docs, batch, windows) => {
          const l = Ledger.open(join(dir, `p${n++}`));
          try {
            fill(l, docs, batch);
            // A re-read adds nothing, to the rows or to the rollup.
            fill(l, docs, batch);
            for (const w of windows)
              for (const kind of KINDS) expectSame(l.report, kind, w.dims, reportWindow(T0, w));
          } finally {
            l.close();
          }
        },
      ),
      { numRuns: 50 },
    );
  });

  it("the rollup holds every edit and activity row of a positive time, summed", () => {
    const l = Ledger.open(join(dir, "sums"));
    try {
      const docs: Doc[] = Array.from({ length: 30 }, (_, i) => ({
        at: i * 431_000,
        dims: i % 16,
        edits: [
          { decision: "accepted", added: i, removed: 1 },
          { decision: i % 2 === 0 ? "rejected" : "failed", added: 5, removed: 5 },
        ],
        gaps: [{ after: 1000, ms: 2000 + i, user: i % 2 === 0 }],
        commits: i % 2,
        prs: i % 3 === 0 ? 1 : 0,
      }));
      fill(l, docs, 4);
      const [edits] = l.report.summed("edits", [], WHOLE) as Record<string, number>[];
      expect(edits).toEqual({
        linesAdded: (29 * 30) / 2,
        linesRemoved: 30,
        editsAccepted: 30,
        editsRejected: 15,
        editsFailed: 15,
      });
      const [act] = l.report.summed("activity", [], WHOLE) as Record<string, number>[];
      expect(act?.commits).toBe(15);
      expect(act?.pullRequests).toBe(10);
      expect((act?.activeUserSeconds ?? 0) + (act?.activeAgentSeconds ?? 0)).toBeCloseTo(
        (30 * 2000 + (29 * 30) / 2) / 1000,
        6,
      );
    } finally {
      l.close();
    }
  });

  it("a v3 ledger holding rows of every kind upgrades in place, its rollup's delivered columns filled", () => {
    const write = (stateDir: string): void => {
      const w = Ledger.open(stateDir);
      const paid = event("m1", { toolCallCount: 1, client: "vscode", timestampMs: T0 });
      w.commit(
        finalObservation([paid], [call("c0", paid.dedupKey, 1, { client: "vscode", timestampMs: T0 })]),
      );
      fill(
        w,
        Array.from({ length: 12 }, (_, i) => ({
          at: i * 1_000_000 - (i === 0 ? ROLLUP_BUCKET_MS * 2 + T0 + 5 : 0), // one before 1970
          dims: i,
          edits: [{ decision: DECISIONS[i % 3] as EditRecord["decision"], added: 3 + i, removed: i }],
          gaps: [{ after: 10, ms: 5000, user: i % 2 === 1 }],
          commits: 1,
          prs: i % 4 === 0 ? 1 : 0,
        })),
        3,
      );
      commitCaptures(w, "/caps/a", [requestCapture("a")]);
      w.close();
    };
    const v3 = ledgerAtVersion(dir, write, 3);
    const path = join(v3, LEDGER_FILE);
    const before = new Database(path, { readonly: true });
    expect(before.pragma("user_version", { simple: true })).toBe(3);
    expect(columnsOf(before, "report_rollup")).not.toContain("lines_added");
    const tables = tablesOf(before);
    const counts = new Map(
      tables.map((t) => [t, (before.prepare(`SELECT COUNT(*) AS n FROM ${t}`).get() as { n: number }).n]),
    );
    before.close();
    for (const t of ["events", "tool_calls", "edits", "activity", "report_rollup", "captures"])
      expect(counts.get(t), t).toBeGreaterThan(0);

    const l = Ledger.open(v3);
    try {
      for (const kind of KINDS)
        for (const dims of [
          [],
          ["model", "provider"],
          ["bucket", "client"],
          ["agent", "project"],
        ] as LedgerDim[][])
          for (const bucketMs of [1, ROLLUP_BUCKET_MS])
            expectSame(l.report, kind, dims, { ...WHOLE, bucketMs });
      const raw = new Database(path, { readonly: true });
      expect(raw.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
      // The upgrade summed the v3 rows of a positive time (the one before 1970 stays out).
      expect(
        raw
          .prepare(
            "SELECT SUM(edits_accepted + edits_rejected + edits_failed) AS e, SUM(commits) AS c, SUM(events) AS ev FROM report_rollup",
          )
          .get(),
      ).toEqual({ e: 11, c: 11, ev: 1 });
      // Every row kept (the step only adds columns and sums).
      for (const [t, n] of counts)
        expect((raw.prepare(`SELECT COUNT(*) AS c FROM ${t}`).get() as { c: number }).c, t).toBe(n);
      raw.close();
      // New rows after the upgrade are rolled up at insert.
      const c = call("c9", "", 1, { timestampMs: T0 + 7 });
      l.commit({
        ...observation([], [c], 5, src("/s/new")),
        edits: [edit(c, { linesAdded: 40, linesRemoved: 2 })],
      });
      expectSame(l.report, "edits", ["model"], { ...WHOLE, bucketMs: 1 });
      expect(l.report.summed("edits", [], WHOLE)[0]).toMatchObject({
        linesAdded: (l.report.grouped("edits", [], WHOLE)[0] as { linesAdded: number }).linesAdded,
      });
    } finally {
      l.close();
    }
  });

  it("a read-only view of a v3 ledger (an older daemon writing it) reports from its rows", () => {
    const v3 = ledgerAtVersion(
      dir,
      (stateDir) => {
        const w = Ledger.open(stateDir);
        fill(
          w,
          [
            {
              at: 5,
              dims: 1,
              edits: [{ decision: "accepted", added: 9, removed: 2 }],
              gaps: [],
              commits: 1,
              prs: 0,
            },
          ],
          1,
        );
        w.close();
      },
      3,
    );
    const l = Ledger.open(v3, { readOnly: true });
    try {
      expect(l.report.summed("edits", ["model"], WHOLE)).toEqual(l.report.grouped("edits", ["model"], WHOLE));
      expect(l.report.summed("edits", [], WHOLE)[0]).toMatchObject({ linesAdded: 9, editsAccepted: 1 });
      expect(l.report.summed("activity", [], WHOLE)[0]).toMatchObject({ commits: 1 });
    } finally {
      l.close();
    }
  });
});
