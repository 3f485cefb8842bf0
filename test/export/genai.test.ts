/**
 * The GenAI semantic-convention histograms through the real OTLP metric exporter: buckets,
 * counts and sums from the ledger, the conventions' boundaries, session.id only when included,
 * one stream across restarts, and delta windows that add up to the same totals.
 */
import { afterEach, describe, expect, it } from "vitest";
import { GENAI_ATTRIBUTES } from "../../src/export/genai/metrics.ts";
import { ExportPipeline } from "../../src/export/pipeline.ts";
import { buildPriceLookup } from "../../src/export/price-lookup.ts";
import { GENAI_TOKEN_BOUNDARIES, TOOL_DURATION_BOUNDARIES } from "../../src/ledger/signals/signals.ts";
import { createLogger } from "../../src/util/log.ts";
import { LEAD_PATH, leadDoc, observe, ROOT } from "../helpers/signal-docs.ts";
import { exportTestConfig } from "./helpers/config.ts";
import { type TempLedger, tempLedger } from "./helpers/ledger.ts";
import { type ReceivedPoint, type Receiver, startReceiver } from "./helpers/otlp-receiver.ts";

let t: TempLedger | undefined;
let rx: Receiver | undefined;
const pipelines: ExportPipeline[] = [];
afterEach(async () => {
  for (const p of pipelines.splice(0)) await p.shutdown();
  await rx?.close();
  rx = undefined;
  t?.dispose();
  t = undefined;
});

async function start(env: Record<string, string>) {
  if (!t || !rx) throw new Error("setup first");
  const cfg = exportTestConfig({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: rx.url, ...env });
  const p = await ExportPipeline.start(cfg.export, t.ledger, {
    logger: createLogger("error", () => {}),
    priceOf: buildPriceLookup(undefined),
    serviceVersion: "9.9.9",
  });
  pipelines.push(p);
  return p;
}

const latest = (points: readonly ReceivedPoint[], metric: string) => {
  const byKey = new Map<string, ReceivedPoint>();
  for (const p of points.filter((x) => x.metric === metric)) byKey.set(JSON.stringify(p.attributes), p);
  return [...byKey.values()];
};

describe("GenAI histograms", () => {
  it("token usage, operation duration and tool duration, with the conventions' buckets and attributes", async () => {
    t = tempLedger();
    rx = await startReceiver();
    const { doc } = leadDoc();
    t.ledger.commit(observe(doc));
    const p = await start({});
    expect(await p.flush()).toEqual({ ok: true });
    const tokens = latest(rx.points, "gen_ai.client.token.usage");
    const input = tokens.find((x) => x.attributes["gen_ai.token.type"] === "input");
    expect(input?.attributes).toEqual({
      "session.id": ROOT,
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": "claude-sonnet-4-5-20250929",
      "gen_ai.token.type": "input",
      "cline.client": "cli",
    });
    expect(input?.kind).toBe("histogram");
    expect(input?.unit).toBe("{token}");
    expect(input?.temporality).toBe("cumulative");
    // Four requests of 1,000 input tokens each (200 + 600 cache read + 200 cache write): bucket (256, 1024].
    expect(input?.histogram).toMatchObject({ count: 4, sum: 4000, min: 1000, max: 1000 });
    expect(input?.histogram?.bounds).toEqual([...GENAI_TOKEN_BOUNDARIES]);
    expect(input?.histogram?.counts[5]).toBe(4);
    const output = tokens.find((x) => x.attributes["gen_ai.token.type"] === "output");
    expect(output?.histogram).toMatchObject({ count: 4, sum: 400 });
    const dur = latest(rx.points, "gen_ai.client.operation.duration")[0];
    expect(dur?.unit).toBe("s");
    // msg_a1 1.2 s, msg_a2 1.0 s (after the later result), msg_a3 1.0 s, msg_a4 0.5 s.
    expect(dur?.histogram?.count).toBe(4);
    expect(dur?.histogram?.sum).toBeCloseTo(3.7, 9);
    const tools = latest(rx.points, "cline.tool.duration");
    const byOutcome = Object.fromEntries(
      tools.map((x) => [
        `${x.attributes["gen_ai.tool.name"]}/${x.attributes["cline.tool.outcome"]}`,
        x.histogram,
      ]),
    );
    expect(Object.keys(byOutcome).sort()).toEqual(["read_files/failure", "run_commands/success"]);
    expect(byOutcome["run_commands/success"]).toMatchObject({ count: 2, sum: expect.closeTo(2.3, 9) });
    expect(byOutcome["read_files/failure"]).toMatchObject({ count: 1, sum: expect.closeTo(0.3, 9) });
    expect(byOutcome["read_files/failure"]?.bounds).toEqual([...TOOL_DURATION_BOUNDARIES]);
    for (const x of [...tokens, dur, ...tools]) {
      for (const k of Object.keys(x?.attributes ?? {})) expect(GENAI_ATTRIBUTES.has(k), k).toBe(true);
    }
  });

  it("session.id is left out when not included; coinciding series merge", async () => {
    t = tempLedger();
    rx = await startReceiver();
    t.ledger.commit(observe(leadDoc().doc));
    const other = leadDoc().doc;
    t.ledger.commit(
      observe(
        { ...other, sessionId: "1796018194999_other" },
        "/s/1796018194999_other/1796018194999_other.messages.json",
      ),
    );
    const p = await start({ CLINE_OTEL_INCLUDE_SESSION_ID: "false" });
    expect(await p.flush()).toEqual({ ok: true });
    const input = latest(rx.points, "gen_ai.client.token.usage").filter(
      (x) => x.attributes["gen_ai.token.type"] === "input",
    );
    expect(input).toHaveLength(1);
    expect(input[0]?.attributes["session.id"]).toBeUndefined();
    expect(input[0]?.histogram?.count).toBe(8);
  });

  it("cumulative: a restart continues the same stream", async () => {
    t = tempLedger();
    rx = await startReceiver();
    t.ledger.commit(observe(leadDoc({ secondTurn: false }).doc, LEAD_PATH, 100));
    const a = await start({});
    expect(await a.shutdown()).toEqual({ ok: true });
    t.reopen();
    t.ledger.commit(observe(leadDoc().doc, LEAD_PATH, 200));
    const b = await start({});
    expect(await b.flush()).toEqual({ ok: true });
    const input = rx.points.filter(
      (x) => x.metric === "gen_ai.client.token.usage" && x.attributes["gen_ai.token.type"] === "input",
    );
    expect(new Set(input.map((x) => x.startNs)).size).toBe(1);
    expect(input.at(-1)?.histogram?.count).toBe(4);
  });

  it("delta: windows add up to the same totals", async () => {
    t = tempLedger();
    rx = await startReceiver();
    t.ledger.commit(observe(leadDoc({ secondTurn: false }).doc, LEAD_PATH, 100));
    const env = { OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: "delta" };
    const c = await start(env);
    expect(await c.flush()).toEqual({ ok: true });
    t.ledger.commit(observe(leadDoc().doc, LEAD_PATH, 200));
    expect(await c.flush()).toEqual({ ok: true });
    expect(await c.flush()).toEqual({ ok: true });
    const deltas = rx.points.filter(
      (x) => x.metric === "gen_ai.client.token.usage" && x.attributes["gen_ai.token.type"] === "input",
    );
    expect(deltas.every((x) => x.temporality === "delta")).toBe(true);
    expect(deltas.reduce((n, x) => n + (x.histogram?.count ?? 0), 0)).toBe(4);
    expect(deltas.reduce((n, x) => n + (x.histogram?.sum ?? 0), 0)).toBe(4000);
  });

  it("delta: cline.tool.duration and cline.tool.calls by outcome ride the window of final calls", async () => {
    t = tempLedger();
    rx = await startReceiver();
    // toolu_3 has no result: its document is long quiet (CLINE_OTEL_QUIET_TIME, 15 min by default),
    // so the pipeline finalizes it before the first collection: outcome unknown, ending at the
    // document's last ts (0 s) -- with no events or traces exporter configured.
    t.ledger.commit(observe(leadDoc({ cancelled: true }).doc, LEAD_PATH, 100));
    const c = await start({ OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: "delta" });
    expect(await c.flush()).toEqual({ ok: true });
    // Its result appears later: the call was final, nothing changes; nothing is sent twice.
    t.ledger.commit(observe(leadDoc().doc, LEAD_PATH, 200));
    expect(await c.flush()).toEqual({ ok: true });
    expect(await c.flush()).toEqual({ ok: true });
    const of = (metric: string) => rx?.points.filter((x) => x.metric === metric) ?? [];
    const key = (x: ReceivedPoint) =>
      `${x.attributes["gen_ai.tool.name"]}/${x.attributes["cline.tool.outcome"]}`;
    const calls: Record<string, number> = {};
    for (const x of of("cline.tool.calls")) calls[key(x)] = (calls[key(x)] ?? 0) + x.value;
    expect(calls).toEqual({ "run_commands/success": 1, "read_files/failure": 1, "run_commands/unknown": 1 });
    const durations: Record<string, { count: number; sum: number }> = {};
    for (const x of of("cline.tool.duration")) {
      const d = durations[key(x)] ?? { count: 0, sum: 0 };
      durations[key(x)] = d;
      d.count += x.histogram?.count ?? 0;
      d.sum += x.histogram?.sum ?? 0;
    }
    expect(durations).toEqual({
      "run_commands/success": { count: 1, sum: 0.8 },
      "read_files/failure": { count: 1, sum: 0.3 },
      "run_commands/unknown": { count: 1, sum: 0 },
    });
    for (const x of [...of("cline.tool.calls"), ...of("cline.tool.duration")])
      expect(x.temporality).toBe("delta");
  });
});
