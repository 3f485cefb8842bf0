/**
 * Events and traces end to end: `run --once` over a quiet tree sends every record and span
 * once (no orphan parent), a second run sends nothing; kill -9 at random moments while Cline
 * writes and the collector answers 503 to a third of the requests loses nothing.
 */
import { describe, expect, it } from "vitest";
import { type ReceivedLog, type ReceivedSpan, startReceiver } from "../export/helpers/otlp-receiver.ts";
import { dirArgs, onceArgs, runCliAsync, startDaemon } from "./helpers/cli.ts";
import { e2eScratch } from "./helpers/scratch.ts";
import { type Msg, metricsFor, type SessionSpec, writeSession } from "./helpers/sessions.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const scratch = e2eScratch();

function signalsEnv(base: string, protocol = "http/protobuf"): Record<string, string> {
  return {
    OTEL_METRICS_EXPORTER: "none",
    OTEL_LOGS_EXPORTER: "otlp",
    OTEL_TRACES_EXPORTER: "otlp",
    OTEL_EXPORTER_OTLP_ENDPOINT: base,
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    OTEL_EXPORTER_OTLP_TIMEOUT: "1500",
    OTEL_BLRP_SCHEDULE_DELAY: "200",
    OTEL_BSP_SCHEDULE_DELAY: "200",
  };
}

const logKey = (l: ReceivedLog) =>
  [
    l.eventName,
    l.attributes["session.id"],
    l.attributes["cline.message.id"],
    l.attributes["gen_ai.tool.call.id"] ?? "",
  ].join("|");

function orphans(spans: readonly ReceivedSpan[]): number {
  const ids = new Set(spans.map((s) => s.spanId));
  return spans.filter((s) => s.parentSpanId !== "" && !ids.has(s.parentSpanId)).length;
}

function sessions(n: number, perSession: number): SessionSpec[] {
  return Array.from({ length: n }, (_, s) => ({
    sessionId: `17960002${String(s).padStart(5, "0")}_sigs`,
    cwd: `/w/p${s % 2}`,
    messages: Array.from(
      { length: perSession },
      (_, i): Msg => ({
        id: `msg_${s}_${i}`,
        model: "claude-sonnet-4-5-20250929",
        provider: "anthropic",
        metrics: metricsFor(s * 10 + i),
        tools: i % 2 === 0 ? ["run_commands"] : [],
      }),
    ),
  }));
}

const expectedLogs = (specs: readonly SessionSpec[]) =>
  specs.flatMap((s) => s.messages).reduce((n, m) => n + 1 + (m.tools?.length ?? 0), 0);

describe.each(["http/protobuf", "http/json"])("run --once with events and traces (%s)", (protocol) => {
  it("sends every record and span once, no orphans; a second run sends nothing", async () => {
    const { work, sessionsDir } = scratch.withSessions("e2e-signals-");
    const specs = sessions(3, 4);
    for (const s of specs) writeSession(sessionsDir, s);
    const rx = scratch.receiver(await startReceiver());
    const env = signalsEnv(rx.baseUrl, protocol);
    const r1 = await runCliAsync(onceArgs(work, sessionsDir), env);
    expect(r1.status, r1.stderr).toBe(0);
    expect(rx.logs).toHaveLength(expectedLogs(specs));
    expect(new Set(rx.logs.map(logKey)).size).toBe(rx.logs.length);
    // Spans: every record's span, plus one invoke_agent per turn (one turn per session here).
    expect(rx.spans).toHaveLength(expectedLogs(specs) + specs.length);
    expect(orphans(rx.spans)).toBe(0);
    expect(new Set(rx.spans.map((s) => s.traceId)).size).toBe(specs.length);
    expect(rx.points).toHaveLength(0);
    const r2 = await runCliAsync(onceArgs(work, sessionsDir), env);
    expect(r2.status, r2.stderr).toBe(0);
    expect(rx.logs).toHaveLength(expectedLogs(specs));
    expect(rx.spans).toHaveLength(expectedLogs(specs) + specs.length);
  }, 60_000);
});

describe("run --once with events to a collector that is down", () => {
  it("exits 1 naming the endpoint; the next run delivers", async () => {
    const { work, sessionsDir } = scratch.withSessions("e2e-signals-");
    const specs = sessions(1, 2);
    for (const s of specs) writeSession(sessionsDir, s);
    const rx = scratch.receiver(await startReceiver(() => 503));
    const env = signalsEnv(rx.baseUrl);
    const r1 = await runCliAsync(onceArgs(work, sessionsDir), env);
    expect(r1.status).toBe(1);
    expect(r1.stderr).toMatch(
      /could not deliver (logs|traces) to http:\/\/127\.0\.0\.1:\d+\/v1\/(logs|traces)/,
    );
    rx.setStatus(() => 200);
    const r2 = await runCliAsync(onceArgs(work, sessionsDir), env);
    expect(r2.status, r2.stderr).toBe(0);
    expect(rx.logs).toHaveLength(expectedLogs(specs));
  }, 60_000);
});

describe("events and traces: kill -9 at random moments", () => {
  it("nothing is lost; records sent twice (a crash between a send and its commit) are counted", async () => {
    const { work, sessionsDir } = scratch.withSessions("e2e-signals-crash-");
    let req = 0;
    const rx = scratch.receiver(await startReceiver(() => (req++ % 3 === 2 ? 503 : 200)));
    const common = dirArgs(work, sessionsDir);
    const env = signalsEnv(rx.baseUrl);
    const live: SessionSpec[] = [];
    let stop = false;
    let n = 0;
    const writer = (async () => {
      while (!stop) {
        if (live.length === 0 || n % 6 === 0)
          live.push({
            sessionId: `17960003${String(live.length).padStart(5, "0")}_kill`,
            cwd: "/w",
            messages: [],
          });
        const s = live[n % live.length] as SessionSpec;
        (s.messages as Msg[]).push({
          id: `msg_${n}`,
          model: "mock-model",
          provider: "openai-compatible",
          metrics: metricsFor(n),
          tools: n % 3 === 0 ? ["run_commands"] : [],
        });
        writeSession(sessionsDir, s);
        n++;
        await sleep(20);
      }
    })();
    const kills: number[] = [];
    for (let k = 0; k < 3; k++) {
      const d = startDaemon(["run", "--poll-interval", "0.2", ...common], env);
      const wait = 1200 + Math.floor(Math.random() * 1200);
      kills.push(wait);
      await sleep(wait);
      d.child.kill("SIGKILL");
      const r = await d.done;
      expect(r.signal, r.stderr).toBe("SIGKILL");
    }
    stop = true;
    await writer;
    rx.setStatus(() => 200);
    const final = await runCliAsync(["run", "--once", ...common], env);
    expect(final.status, final.stderr).toBe(0);
    const want = expectedLogs(live);
    const got = new Set(rx.logs.map(logKey));
    const distinct = got.size;
    const missing = live
      .flatMap((s) =>
        s.messages.flatMap((m) => [
          `cline.api_request|${s.sessionId}|${m.id}|`,
          ...(m.tools ?? []).map((_, i) => `cline.tool_call|${s.sessionId}|${m.id}|call_${m.id}_${i}`),
        ]),
      )
      .filter((k) => !got.has(k));
    expect(missing).toEqual([]);
    expect(distinct).toBe(want);
    const spanIds = rx.spans.map((s) => s.spanId);
    // One invoke_agent per written session (a session the writer created but never wrote has no document).
    const written = live.filter((x) => x.messages.length > 0).length;
    expect(new Set(spanIds).size).toBe(want + written);
    expect(orphans(rx.spans)).toBe(0);
    console.log(
      `signals crash: kills after ${kills.join(", ")} ms; ${want} records, ${rx.logs.length - distinct} sent twice; ` +
        `${new Set(spanIds).size} spans, ${spanIds.length - new Set(spanIds).size} sent twice`,
    );
  }, 90_000);
});
