/**
 * Traces through the SDK's real span exporters to an in-process receiver: one trace per root
 * session, deterministic ids, chat / execute_tool / invoke_agent spans with Cline's times, no
 * orphan after the final flush on a quiet tree, and each span sent once.
 */
import { afterEach, describe, expect, it } from "vitest";
import { buildPriceLookup } from "../../src/export/price-lookup.ts";
import { SignalPipeline } from "../../src/export/signals/pipeline.ts";
import { spanIdOf, traceIdOf } from "../../src/export/traces/ids.ts";
import { createLogger } from "../../src/util/log.ts";
import {
  assistant,
  LEAD_PATH,
  leadDoc,
  messagesDoc,
  observe,
  prompt,
  ROOT,
  SUB_ID,
  SUB_PATH,
  toolResult,
} from "../helpers/signal-docs.ts";
import { signalsTestConfig, testResource } from "./helpers/config.ts";
import { type TempLedger, tempLedger } from "./helpers/ledger.ts";
import { type ReceivedSpan, type Receiver, startReceiver } from "./helpers/otlp-receiver.ts";

let t: TempLedger | undefined;
let rx: Receiver | undefined;
const pipelines: SignalPipeline[] = [];
afterEach(async () => {
  for (const p of pipelines.splice(0)) await p.shutdown();
  await rx?.close();
  rx = undefined;
  t?.dispose();
  t = undefined;
});

async function pipeline(env: Record<string, string>, now?: () => number): Promise<SignalPipeline> {
  if (!t) throw new Error("setup first");
  const cfg = signalsTestConfig({ OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_TIMEOUT: "1000", ...env });
  const p = await SignalPipeline.create(cfg, t.ledger, {
    logger: createLogger("error", () => {}),
    priceOf: buildPriceLookup(undefined),
    project: "basename",
    resource: testResource(t.ledger),
    serviceVersion: "9.9.9",
    ...(now ? { now } : {}),
  });
  pipelines.push(p);
  return p;
}

/** Every parent a span names was received too. */
function orphans(spans: readonly ReceivedSpan[]): ReceivedSpan[] {
  const ids = new Set(spans.map((s) => s.spanId));
  return spans.filter((s) => s.parentSpanId !== "" && !ids.has(s.parentSpanId));
}

function withSubAgent(t0: number) {
  return messagesDoc(
    [
      prompt("s_u1", t0 + 1300),
      assistant("s_a1", t0 + 1350, [["s_t1", "read_files"]]),
      toolResult("s_r1", t0 + 1380, "s_t1"),
      assistant("s_a2", t0 + 1450),
    ],
    "subagent",
    `${ROOT}__${SUB_ID}`,
  );
}

for (const protocol of ["http/protobuf", "http/json"] as const) {
  describe(`traces over ${protocol}`, () => {
    it("one trace per root session: turns, chats, tools, the sub-agent nested; no orphans on a quiet tree", async () => {
      t = tempLedger();
      rx = await startReceiver();
      const { t0, doc } = leadDoc();
      t.ledger.commit(observe(doc));
      t.ledger.commit(observe(withSubAgent(t0), SUB_PATH));
      const p = await pipeline({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: rx.tracesUrl,
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
      });
      expect(await p.shutdown()).toEqual({ ok: true });
      const spans = rx.spans;
      expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([traceIdOf(ROOT)]));
      expect(orphans(spans)).toEqual([]);
      const names = spans.map((s) => s.name).sort();
      expect(names).toEqual(
        [
          "chat claude-sonnet-4-5-20250929",
          "chat claude-sonnet-4-5-20250929",
          "chat claude-sonnet-4-5-20250929",
          "chat claude-sonnet-4-5-20250929",
          "chat claude-sonnet-4-5-20250929",
          "chat claude-sonnet-4-5-20250929",
          "execute_tool read_files",
          "execute_tool read_files",
          "execute_tool run_commands",
          "execute_tool run_commands",
          "invoke_agent lead",
          "invoke_agent lead",
          "invoke_agent subagent",
        ].sort(),
      );
      const byName = (n: string) => spans.filter((s) => s.name === n);
      const [turn1, turn2] = byName("invoke_agent lead").sort((a, b) => Number(a.startNs - b.startNs));
      expect(turn1?.parentSpanId).toBe("");
      expect(turn2?.parentSpanId).toBe("");
      expect(turn1?.startNs).toBe(BigInt(t0) * 1_000_000n);
      expect(turn1?.endNs).toBe(BigInt(t0 + 3000) * 1_000_000n);
      // The sub-agent began during the lead's first turn.
      const sub = byName("invoke_agent subagent")[0];
      expect(sub?.parentSpanId).toBe(turn1?.spanId);
      const chat1 = spans.find((s) => s.attributes["cline.message.id"] === "msg_a1");
      expect(chat1).toMatchObject({
        kind: 3,
        parentSpanId: turn1?.spanId,
        startNs: BigInt(t0) * 1_000_000n,
        endNs: BigInt(t0 + 1200) * 1_000_000n,
        spanId: spanIdOf(`cline|${ROOT}|lead|msg_a1`),
      });
      expect(chat1?.attributes).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.usage.input_tokens": 1000,
        "cline.project": "ws",
      });
      const failed = spans.find((s) => s.attributes["gen_ai.tool.call.id"] === "toolu_2");
      expect(failed).toMatchObject({
        name: "execute_tool read_files",
        kind: 1,
        statusCode: 2,
        parentSpanId: turn1?.spanId,
        startNs: BigInt(t0 + 1200) * 1_000_000n,
        endNs: BigInt(t0 + 1500) * 1_000_000n,
      });
      expect(failed?.attributes["gen_ai.operation.name"]).toBe("execute_tool");
      const ok = spans.find((s) => s.attributes["gen_ai.tool.call.id"] === "toolu_1");
      expect(ok?.statusCode).toBe(0);
      const subChat = spans.find((s) => s.attributes["cline.message.id"] === "s_a1");
      expect(subChat?.parentSpanId).toBe(sub?.spanId);
    });
  });
}

describe("traces: immutable once sent", () => {
  it("a span is sent once: a flush, a re-read and a restart send nothing again", async () => {
    t = tempLedger();
    rx = await startReceiver();
    const { t0, doc } = leadDoc({ cancelled: true });
    t.ledger.commit(observe(doc, LEAD_PATH, 100));
    const env = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: rx.tracesUrl };
    const active = () => t0 + 11_500;
    const a = await pipeline(env, active);
    expect(await a.flush()).toEqual({ ok: true });
    // The open turn and the running call are not sent; what was sent names a parent that will come.
    const first = rx.spans.length;
    expect(rx.spans.some((s) => s.attributes["gen_ai.tool.call.id"] === "toolu_3")).toBe(false);
    expect(await a.flush()).toEqual({ ok: true });
    expect(rx.spans.length).toBe(first);
    t.ledger.commit(observe(doc, LEAD_PATH, 101));
    expect(await a.shutdown()).toEqual({ ok: true });
    expect(rx.spans.length).toBe(first);
    t.reopen();
    t.ledger.commit(observe(leadDoc().doc, LEAD_PATH, 200));
    const b = await pipeline(env, () => t0 + 13_000 + 900_000);
    expect(await b.shutdown()).toEqual({ ok: true });
    const ids = rx.spans.map((s) => s.spanId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(orphans(rx.spans)).toEqual([]);
    expect(rx.spans.length).toBe(9); // 4 chats, 3 tools, 2 turns, each once
  });
});
