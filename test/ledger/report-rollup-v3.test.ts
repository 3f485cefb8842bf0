/**
 * Schema v3 (src/ledger/tables/report-rollup-v3.ts): the report rollup kept at insert time. The
 * rollup-based totals (`ReportQueries.summed`, what `report` reads) equal a GROUP BY over the
 * events and tool calls (`grouped`) for random ledgers, windows and groupings; a whole report built
 * on either is the same; a v2 ledger holding rows of every kind upgrades in place with its rollup
 * filled from its rows.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Source, ToolCall, UsageEvent } from "../../src/adapter/types.ts";
import type { PriceTable } from "../../src/cost/lookup.ts";
import { LEDGER_FILE, Ledger } from "../../src/ledger/ledger.ts";
import { migrate } from "../../src/ledger/migrate.ts";
import type {
  GroupKind,
  LedgerDim,
  ReportQueries,
  ReportWindow,
} from "../../src/ledger/rollups/report-queries.ts";
import { MIGRATIONS } from "../../src/ledger/schema.ts";
import { ROLLUP_BUCKET_MS } from "../../src/ledger/tables/report-rollup-v3.ts";
import { buildReport } from "../../src/report/report.ts";
import {
  commitCaptures,
  commitCompaction,
  requestCapture,
  sampleCompaction,
} from "../export/helpers/ledger.ts";
import { call, event, finalObservation, observation } from "../helpers/events.ts";
import { reportWindow, windowsArb } from "../helpers/report-windows.ts";
import { columnsOf, tablesOf } from "../helpers/v1-ledger.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "rollup-v3-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const T0 = 1_796_000_000_000;
const src = (path: string): Source => ({ adapterId: "cline", path, origin: "walk", hint: {} });
const DIMS: readonly LedgerDim[] = ["bucket", "model", "provider", "project", "agent", "client"];
const KINDS: readonly GroupKind[] = ["events", "events-without-calls", "calls"];

/** The columns `summed` promises for a kind: every column, but only the count of calls. */
function comparable(kind: GroupKind, rows: Record<string, unknown>[], dims: readonly LedgerDim[]) {
  return rows.map((r) => {
    const out: Record<string, unknown> = {};
    for (const d of dims) out[d] = r[d];
    if (kind === "calls") out.toolCalls = r.toolCalls;
    else for (const k of ["input", "output", "cacheRead", "cacheWrite", "events"]) out[k] = r[k];
    return out;
  });
}

function expectSame(q: ReportQueries, kind: GroupKind, dims: readonly LedgerDim[], w: ReportWindow): void {
  expect(comparable(kind, q.summed(kind, dims, w), dims)).toEqual(
    comparable(kind, q.grouped(kind, dims, w), dims),
  );
}

interface Msg {
  readonly at: number;
  readonly dims: number;
  readonly calls: number;
  readonly known: boolean;
  readonly tokens: number;
}

const msgArb: fc.Arbitrary<Msg> = fc.record({
  // Across a few days, often right at a bucket's edge.
  at: fc.oneof(
    fc.integer({ min: -2 * ROLLUP_BUCKET_MS, max: 3 * 86_400_000 }),
    fc.integer({ min: -3, max: 300 }).map((k) => k * ROLLUP_BUCKET_MS + (k % 3) - 1),
  ),
  dims: fc.nat({ max: 15 }),
  calls: fc.nat({ max: 3 }),
  known: fc.boolean(),
  tokens: fc.nat({ max: 10_000 }),
});

/** Commits `msgs` (in batches of `batch` sources) through the ledger's own write path. */
function fill(l: Ledger, msgs: readonly Msg[], batch: number): void {
  const obs = msgs.map((m, i) => {
    const dims = {
      model: `m${m.dims % 2}`,
      provider: `p${(m.dims >> 1) % 2}`,
      project: `/w${(m.dims >> 2) % 2}`,
      agent: (m.dims >> 3) % 2 === 0 ? "lead" : "subagent",
      client: i % 3 === 0 ? "cli" : "",
    };
    const ts = T0 + m.at;
    const e = event(`e${i}`, {
      ...dims,
      timestampMs: ts,
      input: m.tokens,
      output: i,
      cacheRead: m.tokens % 7,
      cacheWrite: 1,
      toolCallCount: m.calls,
    });
    const calls: ToolCall[] = Array.from({ length: m.calls }, (_, k) =>
      call(`c${i}_${k}`, m.known ? e.dedupKey : "", m.calls, {
        ...dims,
        timestampMs: ts,
        toolName: k % 2 === 0 ? "read_files" : "run_commands",
      }),
    );
    // A message without metrics: its calls are stored without usage (no event).
    const events: UsageEvent[] = m.known || m.calls === 0 ? [e] : [];
    return observation(events, calls, 100 + i, src(`/s/${i}.messages.json`));
  });
  for (let i = 0; i < obs.length; i += batch) l.commitAll(obs.slice(i, i + batch));
}

describe("report rollup (schema v3)", () => {
  it("summed equals a GROUP BY over the rows, for random ledgers, windows and groupings", () => {
    let n = 0;
    fc.assert(
      fc.property(
        fc.array(msgArb, { minLength: 0, maxLength: 40 }),
        fc.integer({ min: 1, max: 8 }),
        windowsArb(DIMS, [ROLLUP_BUCKET_MS, 4 * ROLLUP_BUCKET_MS, 86_400_000, 1000, 60_000], 6),
        (msgs, batch, windows) => {
          const l = Ledger.open(join(dir, `p${n++}`));
          try {
            fill(l, msgs, batch);
            // A re-read of the same sources adds nothing, to the rows or to the rollup.
            fill(l, msgs, batch);
            for (const w of windows)
              for (const kind of KINDS) expectSame(l.report, kind, w.dims, reportWindow(T0, w));
          } finally {
            l.close();
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("rows of one transaction in one bucket, each differing from the one before in one dimension, stay apart", () => {
    let n = 0;
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: -1, max: 3 }), fc.nat({ max: 2 })), {
          minLength: 1,
          maxLength: 30,
        }),
        (steps) => {
          // A walk over the dims bits (model, provider, project, agent): one flipped per message; all
          // at one time, committed in one transaction (the rollup's per-transaction cells).
          let dims = 0;
          const msgs: Msg[] = steps.map(([flip, calls]) => {
            if (flip >= 0) dims ^= 1 << flip;
            return { at: 1_000, dims, calls, known: true, tokens: 10 + dims };
          });
          const l = Ledger.open(join(dir, `w${n++}`));
          try {
            fill(l, msgs, msgs.length);
            const w = {
              fromMs: Number.MIN_SAFE_INTEGER,
              toMs: Number.MAX_SAFE_INTEGER,
              bucketMs: ROLLUP_BUCKET_MS,
            };
            for (const kind of KINDS) expectSame(l.report, kind, DIMS, w);
          } finally {
            l.close();
          }
        },
      ),
      { numRuns: 25 },
    );
  });

  it("a report built from the rollup equals one built from GROUP BY", () => {
    const l = Ledger.open(join(dir, "r"));
    try {
      fill(
        l,
        Array.from({ length: 200 }, (_, i) => ({
          at: i * 431_000,
          dims: i % 16,
          calls: i % 4,
          known: i % 5 !== 0,
          tokens: 1000 + i,
        })),
        16,
      );
      const grouped = { report: { summed: l.report.grouped.bind(l.report) } } as unknown as Ledger;
      // m1 priced under p1 only: some rows priced, some not.
      const prices: PriceTable = {
        source: "test",
        byProvider: new Map([["p1", new Map([["m1", { input: 3e-6, output: 1.5e-5, cacheRead: 3e-7 }]])]]),
        providerAliases: new Map(),
        vendorPrefixes: new Map(),
        preferredProviders: [],
        anyProvider: new Map(),
      };
      for (const by of [
        [],
        ["model"],
        ["day"],
        ["project", "week"],
        ["agent", "client"],
        ["tool"],
      ] as const) {
        for (const window of [{}, { fromMs: T0 + 3_600_123, toMs: T0 + 50_000_000 }]) {
          const a = buildReport(l, [...by], prices, window);
          const b = buildReport(grouped, [...by], prices, window);
          expect(a).toEqual(b);
        }
      }
    } finally {
      l.close();
    }
  });

  it("a v2 ledger holding rows of every kind upgrades in place, its rollup filled from its rows", () => {
    // Rows of every kind, written by this build's code, copied into a ledger of the v2 DDL.
    const source = join(dir, "source");
    mkdirSync(source);
    const w = Ledger.open(source);
    const paid = event("m1", { toolCallCount: 2, client: "vscode", startMs: T0 - 1000 });
    const calls = [
      call("c1", paid.dedupKey, 2, { client: "vscode" }),
      call("c2", paid.dedupKey, 2, { client: "vscode", toolName: "read_files" }),
    ];
    w.commit(
      finalObservation([paid, event("m2", { client: "vscode", timestampMs: T0 + 86_400_000 })], calls),
    );
    w.commit(observation([], [call("c3", "", 1, { timestampMs: T0 + 5 })], 1, src("/s/b")));
    commitCaptures(w, "/caps/a", [requestCapture("a")]);
    commitCompaction(w, sampleCompaction());
    w.close();
    const v2 = join(dir, "v2");
    mkdirSync(v2, { mode: 0o700 });
    const path = join(v2, LEDGER_FILE);
    const db = new Database(path);
    migrate(
      db,
      path,
      () => 1,
      () => "unused",
      MIGRATIONS.slice(0, 2),
    );
    db.prepare("ATTACH DATABASE ? AS src").run(join(source, LEDGER_FILE));
    const tables = tablesOf(db);
    expect(tables).not.toContain("report_rollup");
    const counts = new Map<string, number>();
    db.transaction(() => {
      for (const t of tables) {
        const cols = columnsOf(db, t).join(", ");
        db.exec(`DELETE FROM main.${t}; INSERT INTO main.${t} (${cols}) SELECT ${cols} FROM src.${t}`);
        counts.set(t, (db.prepare(`SELECT COUNT(*) AS n FROM main.${t}`).get() as { n: number }).n);
      }
    })();
    db.exec("DETACH DATABASE src");
    db.close();
    for (const t of ["events", "tool_calls", "captures", "compactions", "usage_series", "signal_documents"])
      expect(counts.get(t), t).toBeGreaterThan(0);

    const l = Ledger.open(v2);
    try {
      for (const kind of KINDS)
        for (const dims of [
          [],
          ["model", "provider"],
          ["bucket", "client"],
          ["agent", "project"],
        ] as LedgerDim[][])
          expectSame(l.report, kind, dims, {
            fromMs: Number.MIN_SAFE_INTEGER,
            toMs: Number.MAX_SAFE_INTEGER,
            bucketMs: ROLLUP_BUCKET_MS,
          });
      // The upgrade summed the v2 rows: every event and call is in the rollup.
      const raw = new Database(path, { readonly: true });
      expect(raw.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
      expect(raw.prepare("SELECT SUM(events) AS e, SUM(tool_calls) AS c FROM report_rollup").get()).toEqual({
        e: 2,
        c: 3,
      });
      // Every row kept but the checkpoints, which v3's edits part drops (the history is read again).
      for (const [t, n] of counts)
        expect((raw.prepare(`SELECT COUNT(*) AS n FROM ${t}`).get() as { n: number }).n, t).toBe(
          t === "checkpoints" ? 0 : n,
        );
      raw.close();
      // New rows after the upgrade are rolled up at insert.
      l.commit(observation([event("m9", { timestampMs: T0 + 7 })], [], 5, src("/s/c")));
      expect(
        l.report.summed("events", [], {
          fromMs: Number.MIN_SAFE_INTEGER,
          toMs: Number.MAX_SAFE_INTEGER,
          bucketMs: 1,
        })[0],
      ).toMatchObject({ events: 3 });
    } finally {
      l.close();
    }
  });

  it("a read-only view of a v2 ledger (an older daemon writing it) reports from its rows", () => {
    const v2 = join(dir, "ro");
    mkdirSync(v2, { mode: 0o700 });
    const path = join(v2, LEDGER_FILE);
    const db = new Database(path);
    migrate(
      db,
      path,
      () => 1,
      () => "unused",
      MIGRATIONS.slice(0, 2),
    );
    db.close();
    const l = Ledger.open(v2, { readOnly: true });
    try {
      expect(l.report.summed("events", ["model"], { fromMs: 0, toMs: 10 ** 13, bucketMs: 1 })).toEqual([]);
    } finally {
      l.close();
    }
  });
});
