/**
 * The `cline.compaction` event (OTLP log) and `compaction` span, on the real CLI's compacted
 * sessions, through the SDK's real exporters to an in-process receiver: one of each per
 * compaction observed, numbers and enums only, the span a zero-duration child of the agent's
 * turn in which it was observed, and exactly once across restarts and re-reads.
 */
import { mkdtempSync, readFileSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { loadGroundTruth } from "../../fixtures/harness/ground-truth.ts";
import { createClineAdapter } from "../../src/adapter/cline/adapter.ts";
import { resolveClinePaths } from "../../src/adapter/cline/paths.ts";
import { runPass } from "../../src/collector/pass.ts";
import { resolveConfig } from "../../src/config/config.ts";
import { resolveSignalsConfig } from "../../src/config/signals.ts";
import { toLogRecord } from "../../src/export/events/records.ts";
import { buildPriceLookup } from "../../src/export/price-lookup.ts";
import { buildResource } from "../../src/export/resource.ts";
import { SIGNAL_ATTRIBUTES } from "../../src/export/signals/attributes.ts";
import { SignalPipeline } from "../../src/export/signals/pipeline.ts";
import { spanIdOf, traceIdOf } from "../../src/export/traces/ids.ts";
import { toSpan } from "../../src/export/traces/spans.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import type { SignalRow } from "../../src/ledger/signals.ts";
import { createLogger } from "../../src/util/log.ts";
import { placeCompactionFixture } from "../adapter/cline/compaction/fixture.ts";
import { type ReceivedSpan, type Receiver, startReceiver } from "./helpers/otlp-receiver.ts";

const work = mkdtempSync(join(tmpdir(), "compaction-signals-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let rx: Receiver | undefined;
afterEach(async () => {
  await rx?.close();
  rx = undefined;
});

/** The fixture's tree (final state, or the copy from before its first compaction) at `root/home`. */
const place = placeCompactionFixture;

function compactionFile(home: string, id: string) {
  const path = join(home, ".cline/data/sessions", id, `${id}.compaction.json`);
  const doc = JSON.parse(readFileSync(path, "utf8")) as {
    updated_at: string;
    source_message_count: number;
    messages: { metadata?: { messagesRemoved?: number; tokensBefore?: number } }[];
  };
  return { path, doc, meta: doc.messages[0]?.metadata ?? {} };
}

/** One `run --once`: a pass, then the final flush of logs and traces; the ledger closed after. */
async function runOnce(home: string, state: string, r: Receiver): Promise<void> {
  const ledger = Ledger.open(state);
  try {
    await runPass(createClineAdapter(resolveClinePaths({}, {}, home)), ledger);
    const cfg = resolveSignalsConfig(
      {
        OTEL_LOGS_EXPORTER: "otlp",
        OTEL_TRACES_EXPORTER: "otlp",
        OTEL_EXPORTER_OTLP_ENDPOINT: r.baseUrl,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
        OTEL_EXPORTER_OTLP_TIMEOUT: "1000",
      },
      { fileHeaders: {}, fileVia: "the headers file", cwd: "/tmp" },
      false,
    );
    const exportCfg = resolveConfig(
      { stateDir: state, sessionsDir: "/tmp/unused-sessions", dbDir: "/tmp/unused-db" },
      {},
      "/tmp",
      "/tmp",
    ).export;
    const p = await SignalPipeline.create(cfg, ledger, {
      logger: createLogger("error", () => {}),
      priceOf: buildPriceLookup(undefined),
      project: "path",
      resource: buildResource(exportCfg, ledger.instanceId, "9.9.9", "host-a"),
      serviceVersion: "9.9.9",
      // A quiet tree: every turn of the fixture is over (so no parent is missing at the end).
      now: () => Date.now() + 86_400_000,
    });
    expect(await p.shutdown()).toEqual({ ok: true });
  } finally {
    ledger.close();
  }
}

const compactionLogs = (r: Receiver) => r.logs.filter((l) => l.eventName === "cline.compaction");
const compactionSpans = (r: Receiver) => r.spans.filter((s) => s.name === "compaction");

function orphans(spans: readonly ReceivedSpan[]): ReceivedSpan[] {
  const ids = new Set(spans.map((s) => s.spanId));
  return spans.filter((s) => s.parentSpanId !== "" && !ids.has(s.parentSpanId));
}

describe("the cline.compaction event and span on the real CLI's sessions", () => {
  it.each([
    ["compaction-agentic", "agentic", undefined],
    ["compaction-basic", "basic", "auto_compaction"],
    ["compaction-overflow", "basic", "overflow_recovery_compaction"],
  ] as const)("%s: one record and one span, numbers and enums as Cline wrote them", async (scenario, strategy, reason) => {
    rx = await startReceiver();
    const root = join(work, `one-${scenario}`);
    const home = place(scenario, "final", root);
    const gt = loadGroundTruth(scenario);
    const id = gt.rootSessionIds[0] ?? "";
    const { doc, meta } = compactionFile(home, id);
    await runOnce(home, join(root, "state"), rx);

    const logs = compactionLogs(rx);
    expect(logs).toHaveLength(1);
    const log = logs[0];
    if (log === undefined) throw new Error("no record");
    const expected: Record<string, unknown> = {
      "session.id": id,
      "cline.session.root_id": id,
      "cline.agent": "lead",
      "cline.project": `/tmp/cline-otel-fixture/${scenario}/ws`,
      "gen_ai.request.model": "mock-model",
      "gen_ai.provider.name": "openai-compatible",
      "cline.compaction.strategy": strategy,
      "cline.compaction.source_message_count": doc.source_message_count,
    };
    if (reason !== undefined) expected["cline.compaction.reason"] = reason;
    if (meta.tokensBefore !== undefined) expected["cline.compaction.tokens_before"] = meta.tokensBefore;
    if (meta.messagesRemoved !== undefined)
      expected["cline.compaction.messages_removed"] = meta.messagesRemoved;
    expect(log.attributes).toEqual(expected);
    // Agentic: Cline records no reason, and tokensBefore; basic: messagesRemoved, no tokensBefore.
    if (strategy === "agentic") expect(meta.tokensBefore).toBeGreaterThan(0);
    else expect(meta.messagesRemoved).toBeGreaterThan(0);
    for (const k of Object.keys(log.attributes)) expect(SIGNAL_ATTRIBUTES.has(k)).toBe(true);
    expect(log.timeNs).toBe(BigInt(Date.parse(doc.updated_at)) * 1_000_000n);

    const spans = compactionSpans(rx);
    expect(spans).toHaveLength(1);
    const span = spans[0];
    if (span === undefined) throw new Error("no span");
    expect(span.startNs).toBe(log.timeNs);
    expect(span.endNs).toBe(span.startNs);
    expect(span.kind).toBe(1);
    expect(span.attributes).toEqual(log.attributes);
    // The record names its span; the span sits in the session's trace, under the lead turn
    // that had started by the compaction's time (the latest such turn).
    expect([log.traceId, log.spanId]).toEqual([span.traceId, span.spanId]);
    expect(span.traceId).toBe(traceIdOf(id));
    const turns = rx.spans.filter((s) => s.name === "invoke_agent lead" && s.startNs <= span.startNs);
    const latest = turns.sort((a, b) => Number(b.startNs - a.startNs))[0];
    expect(latest).toBeDefined();
    expect(span.parentSpanId).toBe(latest?.spanId);
    expect(orphans(rx.spans)).toEqual([]);
  });

  it("compaction-agentic: before, then after, then re-read and restart: the compaction is sent once", async () => {
    rx = await startReceiver();
    const root = join(work, "restart");
    const state = join(root, "state");
    const gt = loadGroundTruth("compaction-agentic");
    const id = gt.rootSessionIds[0] ?? "";
    await runOnce(place("compaction-agentic", "before", root), state, rx);
    expect(compactionLogs(rx)).toEqual([]);
    expect(compactionSpans(rx)).toEqual([]);
    const before = { logs: rx.logs.length, spans: rx.spans.length };
    expect(before.logs).toBeGreaterThan(0);

    // Stop, write more (Cline compacted twice; the file keeps the latest), restart.
    const home = place("compaction-agentic", "final", root);
    await runOnce(home, state, rx);
    expect(compactionLogs(rx)).toHaveLength(1);
    expect(compactionSpans(rx)).toHaveLength(1);

    // The same file again, touched (re-read, same compaction), and another restart: nothing new.
    const { path } = compactionFile(home, id);
    const later = new Date(Date.now() + 5000);
    utimesSync(path, later, later);
    const sent = { logs: rx.logs.length, spans: rx.spans.length };
    await runOnce(home, state, rx);
    await runOnce(home, state, rx);
    expect({ logs: rx.logs.length, spans: rx.spans.length }).toEqual(sent);
    expect(compactionLogs(rx)).toHaveLength(1);
    // Every span id received once: nothing re-sent.
    expect(new Set(rx.spans.map((s) => s.spanId)).size).toBe(rx.spans.length);
    expect(orphans(rx.spans)).toEqual([]);
  });
});

describe("the compaction record and span, table-tested on one queue row", () => {
  const base: SignalRow = {
    seq: 1,
    kind: "compaction",
    refKey: "cline-compaction|s1|lead|2026-12-01T10:00:00.000Z|12",
    tsMs: Date.parse("2026-12-01T10:00:00.000Z"),
    endMs: Date.parse("2026-12-01T10:00:00.000Z"),
    startMs: Date.parse("2026-12-01T10:00:00.000Z"),
    outcome: null,
    cancelled: false,
    rootSessionId: "s1",
    sessionId: "s1",
    agent: "lead",
    project: "/work/ws",
    turnKey: "",
    model: "",
    provider: "",
    client: "",
    endKnown: 1,
    messageId: "",
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    toolCalls: 0,
    toolName: "",
    toolUseId: "",
    usageKnown: true,
    turnId: "",
    strategy: "basic",
    reason: "other",
    sourceMessageCount: 12,
    messagesRemoved: null,
    tokensBefore: null,
    callKey: "",
    operation: "",
    decision: "",
    editSource: "",
    language: "",
    linesAdded: 0,
    linesRemoved: 0,
    exact: 1,
    editsAccepted: 0,
    editsRejected: 0,
    editsFailed: 0,
  };
  const ctx = {
    resource: resourceFromAttributes({}),
    scope: { name: "cline-otel" },
    project: "hash" as const,
    priceOf: buildPriceLookup(undefined),
  };

  it.each([
    [
      "no turn, no model, reason other, no numbers but the count",
      base,
      {
        "cline.compaction.strategy": "basic",
        "cline.compaction.reason": "other",
        "cline.compaction.source_message_count": 12,
      },
    ],
    [
      "agentic: reason unrecorded is left out; tokensBefore 0 is kept (a number, not absent)",
      { ...base, strategy: "agentic", reason: "unrecorded", tokensBefore: 0, model: "m", provider: "p" },
      {
        "cline.compaction.strategy": "agentic",
        "cline.compaction.source_message_count": 12,
        "cline.compaction.tokens_before": 0,
        "gen_ai.request.model": "m",
        "gen_ai.provider.name": "p",
      },
    ],
  ] as const)("%s", (_name, row, own) => {
    const record = toLogRecord(row, ctx, 0);
    const span = toSpan(row, ctx);
    const who = { "session.id": "s1", "cline.session.root_id": "s1", "cline.agent": "lead" };
    expect(record?.eventName).toBe("cline.compaction");
    expect(record?.attributes).toEqual({ ...who, "cline.project": expect.any(String), ...own });
    expect(record?.attributes["cline.project"]).not.toBe("/work/ws");
    expect(span.attributes).toEqual(record?.attributes);
    expect(span.name).toBe("compaction");
    expect(span.startTime).toEqual(span.endTime);
    expect(span.duration).toEqual([0, 0]);
    // No turn in the ledger: a root span of its session's trace.
    expect(span.parentSpanContext).toBeUndefined();
    expect(span.spanContext().spanId).toBe(spanIdOf(row.refKey));
    expect(record?.spanContext?.spanId).toBe(spanIdOf(row.refKey));
  });

  it("in a turn: a child of that turn's span", () => {
    const span = toSpan({ ...base, turnKey: "cline|s1|lead|turn|u1" }, ctx);
    expect(span.parentSpanContext?.spanId).toBe(spanIdOf("cline|s1|lead|turn|u1"));
    expect(span.parentSpanContext?.traceId).toBe(traceIdOf("s1"));
  });
});
