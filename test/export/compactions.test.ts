/**
 * `cline.compactions` (docs/metrics.md): the translation (attributes, the reason only where
 * recorded, nothing off the allow-list) and the export through the real SDK reader, cumulative
 * and delta, exactly once across re-exports and restarts.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Compaction, Observation } from "../../src/adapter/types.ts";
import { resolveConfig } from "../../src/config/config.ts";
import {
  COMPACTION_ALLOWED_ATTRIBUTES,
  COMPACTION_ATTR,
  compactionAttributes,
  translateCompactions,
} from "../../src/export/compactions.ts";
import { ExportPipeline } from "../../src/export/pipeline.ts";
import { buildPriceLookup } from "../../src/export/price-lookup.ts";
import type { CompactionSeriesRow, Ledger } from "../../src/ledger/ledger.ts";
import { silentLogger } from "../../src/util/log.ts";
import { event, observation } from "../helpers/events.ts";
import { sampleCompaction, type TempLedger, tempLedger } from "./helpers/ledger.ts";
import { type Harness, harness, sumValues } from "./helpers/sdk.ts";

const NAME = "cline.compactions";
let t: TempLedger | undefined;
const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.shutdown();
  t?.dispose();
  t = undefined;
});
const track = (h: Harness): Harness => {
  open.push(h);
  return h;
};

function compaction(n: number, over: Partial<Compaction> = {}): Compaction {
  return sampleCompaction({
    compactionKey: `cline-compaction|s1|lead|2026-12-01T10:0${n}:00.000Z|${10 + n}`,
    timestampMs: Date.now(),
    sourceMessageCount: 10 + n,
    tokensBefore: 4000 + n,
    ...over,
  });
}

function commitCompaction(l: Ledger, c: Compaction, size: number) {
  const path = c.sourcePath;
  const obs: Extract<Observation, { status: "read" }> = {
    status: "read",
    source: { adapterId: "cline-compaction", path, origin: "walk", hint: {} },
    checkpoint: { path, size, mtimeNs: String(size), ino: 1, dev: 1 },
    events: [],
    toolCalls: [],
    compactions: [c],
    problems: [],
  };
  return l.commit(obs);
}

const row = (over: Partial<CompactionSeriesRow>): CompactionSeriesRow => ({
  sessionId: "s1",
  agent: "lead",
  client: "",
  project: "/work/ws",
  model: "m",
  provider: "p",
  strategy: "basic",
  reason: "auto_compaction",
  compactions: 1,
  firstMs: 1,
  updatedMs: 1,
  lastEventMs: 1,
  ...over,
});

describe("translateCompactions", () => {
  it("sets the usual attributes, the strategy, and the reason only where Cline recorded one", () => {
    const opts = { project: "path" as const, includeSessionId: true };
    expect(compactionAttributes(row({}), opts)).toEqual({
      "session.id": "s1",
      "cline.agent": "lead",
      "cline.project": "/work/ws",
      "gen_ai.request.model": "m",
      "gen_ai.provider.name": "p",
      [COMPACTION_ATTR.strategy]: "basic",
      [COMPACTION_ATTR.reason]: "auto_compaction",
    });
    const agentic = compactionAttributes(row({ strategy: "agentic", reason: "unrecorded" }), opts);
    expect(agentic[COMPACTION_ATTR.strategy]).toBe("agentic");
    expect(COMPACTION_ATTR.reason in agentic).toBe(false);
    for (const k of Object.keys(agentic)) expect(COMPACTION_ALLOWED_ATTRIBUTES.has(k)).toBe(true);
  });

  it("sums rows that coincide once session.id is off and the project hidden", () => {
    const pts = translateCompactions([row({ sessionId: "a" }), row({ sessionId: "b", compactions: 2 })], {
      project: "none",
      includeSessionId: false,
    });
    expect(pts.map((p) => p.value)).toEqual([3]);
    expect("cline.project" in (pts[0]?.attributes ?? {})).toBe(false);
  });
});

describe("cline.compactions through the SDK reader", () => {
  it("cumulative: one per compaction, model from the session's usage, the same after a re-read and a restart", async () => {
    t = tempLedger();
    t.ledger.commit(observation([event("m1", { model: "mock-model", provider: "openai-compatible" })]));
    expect(commitCompaction(t.ledger, compaction(1), 100).compactionsAdded).toBe(1);
    // The same file read again (a touch, a restart): same key, nothing new.
    expect(commitCompaction(t.ledger, compaction(1), 101).compactionsAdded).toBe(0);
    const h = track(harness(t.ledger));
    await h.flush();
    const pts = h.lastPoints(NAME);
    expect(pts).toHaveLength(1);
    expect(pts[0]?.value).toBe(1);
    expect(pts[0]?.attributes).toMatchObject({
      "gen_ai.request.model": "mock-model",
      "gen_ai.provider.name": "openai-compatible",
      [COMPACTION_ATTR.strategy]: "agentic",
    });
    commitCompaction(t.ledger, compaction(2), 102);
    await h.flush();
    expect(sumValues(h.lastPoints(NAME))).toBe(2);
    await h.shutdown();
    open.splice(0);
    const h2 = track(harness(t.reopen()));
    await h2.flush();
    expect(sumValues(h2.lastPoints(NAME))).toBe(2);
  });

  it("delta: each compaction is delivered once, by its own watermark, across a restart", async () => {
    t = tempLedger();
    t.ledger.commit(observation([event("m1")]));
    commitCompaction(
      t.ledger,
      compaction(1, { strategy: "basic", reason: "overflow_recovery_compaction" }),
      100,
    );
    const h = track(harness(t.ledger, { temporality: "delta" }));
    await h.flush();
    expect(sumValues(h.lastPoints(NAME))).toBe(1);
    expect(h.lastPoints(NAME)[0]?.attributes[COMPACTION_ATTR.reason]).toBe("overflow_recovery_compaction");
    await h.flush();
    expect(sumValues(h.lastPoints(NAME))).toBe(0);
    await h.shutdown();
    open.splice(0);
    const l2 = t.reopen();
    // The delivered compaction watermark was persisted with the others.
    expect(l2.getExportState("memory").compactionWatermark).toBe(l2.maxCompactionId());
    commitCompaction(l2, compaction(2), 101);
    const h2 = track(harness(l2, { temporality: "delta" }));
    await h2.flush();
    expect(sumValues(h2.allPoints(NAME))).toBe(1);
  });
});

describe("Prometheus exposition", () => {
  it("serves cline_compactions_total with the strategy and reason labels the dashboard uses", async () => {
    t = tempLedger();
    t.ledger.commit(observation([event("m1", { model: "mock-model", provider: "openai-compatible" })]));
    commitCompaction(t.ledger, compaction(1), 100);
    commitCompaction(t.ledger, compaction(2, { strategy: "basic", reason: "auto_compaction" }), 101);
    const cfg = resolveConfig(
      { stateDir: "/tmp/unused-state", sessionsDir: "/tmp/unused-s", dbDir: "/tmp/unused-d" },
      { OTEL_METRICS_EXPORTER: "prometheus", OTEL_EXPORTER_PROMETHEUS_PORT: "0" },
      "/tmp",
      "/tmp",
    );
    const pipeline = await ExportPipeline.start(cfg.export, t.ledger, {
      logger: silentLogger,
      priceOf: buildPriceLookup(undefined),
      serviceVersion: "1.0.0",
    });
    try {
      const text = await (await fetch(pipeline.prometheusUrl ?? "")).text();
      expect(text).toContain("# TYPE cline_compactions_total counter");
      const lines = text.split("\n").filter((l) => l.startsWith("cline_compactions_total{"));
      expect(lines).toHaveLength(2);
      expect(lines.find((l) => l.includes('cline_compaction_strategy="agentic"'))).toMatch(/\} 1$/);
      expect(lines.find((l) => l.includes('cline_compaction_strategy="agentic"'))).not.toContain(
        "cline_compaction_reason",
      );
      expect(
        lines.find(
          (l) =>
            l.includes('cline_compaction_strategy="basic"') &&
            l.includes('cline_compaction_reason="auto_compaction"'),
        ),
      ).toMatch(/gen_ai_request_model="mock-model".*\} 1$/);
    } finally {
      await pipeline.shutdown();
    }
  });
});
