/**
 * `cline.client` on every metric family (issue 23), through the real SDK reader: the cline.*
 * counters, the GenAI histograms, the capture metrics and cline.compactions, cumulative (whole,
 * in pages, session id off) and delta. And `vcs.*` on the GenAI histograms when repositories go
 * on metric series (issue 24), as on the other series.
 */
import { afterEach, describe, expect, it } from "vitest";
import { CAPTURE_METRICS } from "../../src/export/captures.ts";
import { COMPACTION_METRIC } from "../../src/export/compactions.ts";
import { GENAI_ATTRIBUTES, GENAI_METRICS } from "../../src/export/genai/metrics.ts";
import { POINTS_PER_ROW } from "../../src/export/pages.ts";
import { METRICS, type PriceLookup } from "../../src/export/translate.ts";
import type { Ledger } from "../../src/ledger/ledger.ts";
import type { RepositoryAttributes } from "../../src/vcs/repository.ts";
import { call, edit, event, finalObservation, withEdits } from "../helpers/events.ts";
import {
  commitCaptures,
  commitCompaction,
  requestCapture,
  sampleCompaction,
  type TempLedger,
  tempLedger,
} from "./helpers/ledger.ts";
import { type Harness, harness } from "./helpers/sdk.ts";

const CLIENT = "jetbrains";
let t: TempLedger | undefined;
let h: Harness | undefined;
afterEach(async () => {
  await h?.shutdown();
  h = undefined;
  t?.dispose();
  t = undefined;
});

const GENAI_NAMES = Object.values(GENAI_METRICS).map((m) => m.name);

/** Every metric family's names: each must carry the client on every point. */
const FAMILIES: Readonly<Record<string, readonly string[]>> = {
  "cline.* counters": Object.values(METRICS).map((m) => m.name),
  "GenAI histograms": GENAI_NAMES,
  "capture metrics": Object.values(CAPTURE_METRICS).map((m) => m.name),
  "cline.compactions": [COMPACTION_METRIC.name],
};

/**
 * A request with two final tool calls (one an edit of two files, one of them inexact, and a
 * rejected one), a second request, a capture and a compaction, all of one client.
 */
function fill(l: Ledger): void {
  const now = Date.now();
  const paid = event("m1", { toolCallCount: 2, client: CLIENT, timestampMs: now, startMs: now - 800 });
  const calls = [
    call("c1", paid.dedupKey, 2, { client: CLIENT, timestampMs: now, toolName: "editor" }),
    call("c2", paid.dedupKey, 2, { client: CLIENT, timestampMs: now, toolName: "read_files" }),
  ];
  // m2's model has no price (cline.requests.unpriced), m1's has (the cost counters).
  const unpriced = event("m2", { client: CLIENT, timestampMs: now, model: "unpriced-model" });
  const c1 = calls[0] as (typeof calls)[number];
  const edits = [
    edit(c1),
    edit(c1, { operation: "create", linesRemoved: 0, exact: false, language: "python" }, 1),
    edit(c1, { decision: "rejected", source: "user" }, 2),
  ];
  l.commit(withEdits(finalObservation([paid, unpriced], calls), edits));
  commitCaptures(l, "/caps/a", [requestCapture("a", { client: CLIENT, timestampMs: now })]);
  commitCompaction(l, sampleCompaction({ timestampMs: now }));
}

const PRICE = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
const priceOf: PriceLookup = (_provider, model) => (model === "m1" ? PRICE : undefined);

const PATHS = {
  cumulative: { temporality: "cumulative", translate: { priceOf } },
  // One usage row a page (POINTS_PER_ROW): every family crosses a page boundary.
  "cumulative in pages": {
    temporality: "cumulative",
    translate: { priceOf },
    pagePoints: POINTS_PER_ROW,
    maxPointsPerRequest: POINTS_PER_ROW,
  },
  "cumulative, session id off": {
    temporality: "cumulative",
    translate: { priceOf, includeSessionId: false },
  },
  delta: { temporality: "delta", translate: { priceOf } },
} as const satisfies Record<string, Parameters<typeof harness>[1]>;

describe("cline.client on every metric series", () => {
  for (const [path, opts] of Object.entries(PATHS)) {
    it.each(Object.entries(FAMILIES))(`${path}: %s`, async (_family, names) => {
      t = tempLedger();
      fill(t.ledger);
      h = harness(t.ledger, opts);
      await h.flush();
      for (const name of names) {
        const points = h.allPoints(name);
        expect(points.length, name).toBeGreaterThan(0);
        for (const p of points) expect(p.attributes["cline.client"], name).toBe(CLIENT);
      }
    });
  }
});

describe("vcs.* on the GenAI histograms", () => {
  const repo: RepositoryAttributes = {
    series: { "vcs.repository.url.full": "https://example.com/acme/ws", "vcs.repository.name": "ws" },
    all: { "vcs.repository.url.full": "https://example.com/acme/ws", "vcs.repository.name": "ws" },
  };
  const none: RepositoryAttributes = { series: {}, all: {} };
  const repositoryOf = (workspace: string) => (workspace === "/work/ws" ? repo : none);

  for (const temporality of ["cumulative", "delta"] as const) {
    it(`${temporality}: the session workspace's repository, as on the other series`, async () => {
      t = tempLedger();
      fill(t.ledger);
      h = harness(t.ledger, { temporality, translate: { repositoryOf } });
      await h.flush();
      for (const name of [...GENAI_NAMES, METRICS.tokenUsage.name]) {
        const points = h.allPoints(name);
        expect(points.length, name).toBeGreaterThan(0);
        for (const p of points) expect(p.attributes, name).toMatchObject(repo.series);
        if (GENAI_NAMES.includes(name))
          for (const k of Object.keys(points[0]?.attributes ?? {}))
            expect(GENAI_ATTRIBUTES.has(k), k).toBe(true);
      }
    });
  }

  it("without a repository lookup (the switch off), no vcs.* on them", async () => {
    t = tempLedger();
    fill(t.ledger);
    h = harness(t.ledger, {});
    await h.flush();
    for (const name of GENAI_NAMES)
      for (const p of h.allPoints(name))
        expect(Object.keys(p.attributes).some((k) => k.startsWith("vcs."))).toBe(false);
  });
});
