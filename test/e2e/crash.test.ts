/**
 * kill -9 the daemon at random moments while Cline keeps writing and the collector rejects a
 * third of all requests with 503. After a final `run --once`: cumulative totals equal the
 * truth exactly (one stream, never doubled); delta loses nothing.
 */
import { describe, expect, it } from "vitest";
import { cumulativeTotals, deltaTotals, startReceiver, sumBy } from "../export/helpers/otlp-receiver.ts";
import { dirArgs, runCliAsync, startDaemon } from "./helpers/cli.ts";
import { e2eScratch } from "./helpers/scratch.ts";
import { type Msg, metricsFor, type SessionSpec, truthByType, writeSession } from "./helpers/sessions.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const scratch = e2eScratch();

/** Cline at work: appends a message to a session every few ms, sometimes starting a new one. */
function startWriter(sessionsDir: string) {
  const sessions: { spec: SessionSpec; messages: Msg[] }[] = [];
  let n = 0;
  let stop = false;
  const run = (async () => {
    while (!stop) {
      if (sessions.length === 0 || n % 7 === 0) {
        const id = `17960001${String(sessions.length).padStart(5, "0")}_crash`;
        const messages: Msg[] = [];
        sessions.push({ spec: { sessionId: id, cwd: `/w/p${sessions.length % 3}`, messages }, messages });
      }
      const s = sessions[n % sessions.length] as (typeof sessions)[number];
      s.messages.push({
        id: `msg_${n}`,
        model: n % 2 === 0 ? "claude-sonnet-4-5-20250929" : "mock-model",
        provider: n % 2 === 0 ? "anthropic" : "openai-compatible",
        metrics: metricsFor(n),
        tools: n % 3 === 0 ? ["run_commands"] : [],
      });
      writeSession(sessionsDir, s.spec);
      n++;
      await sleep(15);
    }
  })();
  return {
    async stop() {
      stop = true;
      await run;
      return sessions.map((s) => s.spec);
    },
  };
}

describe.each(["cumulative", "delta"] as const)("crash: kill -9 at random moments (%s)", (temporality) => {
  it("the final totals equal the truth (nothing lost, cumulative never doubled)", async () => {
    const { work, sessionsDir } = scratch.withSessions("e2e-crash-");
    let req = 0;
    const rx = scratch.receiver(await startReceiver(() => (req++ % 3 === 2 ? 503 : 200)));
    const common = dirArgs(work, sessionsDir);
    const env = {
      OTEL_METRICS_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: rx.url,
      OTEL_EXPORTER_OTLP_TIMEOUT: "1500",
      OTEL_METRIC_EXPORT_INTERVAL: "250",
      OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: temporality,
    };
    const writer = startWriter(sessionsDir);
    const kills: number[] = [];
    for (let k = 0; k < 4; k++) {
      const d = startDaemon(["run", "--poll-interval", "0.2", ...common], env);
      const wait = 1200 + Math.floor(Math.random() * 1300);
      kills.push(wait);
      await sleep(wait);
      d.child.kill("SIGKILL");
      const r = await d.done;
      expect(r.signal, r.stderr).toBe("SIGKILL");
    }
    const sessions = await writer.stop();
    rx.setStatus(() => 200);
    const final = await runCliAsync(["run", "--once", ...common], env);
    expect(final.status, final.stderr).toBe(0);

    const truth = truthByType(sessions);
    const accepted = rx.requests.filter((r) => r.status === 200).length;
    const rejected = rx.requests.filter((r) => r.status === 503).length;
    if (temporality === "cumulative") {
      const got = sumBy(cumulativeTotals(rx.points, "cline.token.usage"), "type");
      expect(got).toEqual(truth);
      const ours = rx.points.filter((p) => p.scope === "cline-otel");
      expect(new Set(ours.map((p) => p.startNs)).size).toBe(1);
      console.log(
        `crash (cumulative): kills after ${kills.join(", ")} ms; ${accepted} accepted / ${rejected} rejected requests; totals exact`,
      );
    } else {
      const got = sumBy(deltaTotals(rx.points, "cline.token.usage"), "type");
      for (const type of Object.keys(truth)) expect(got[type] ?? 0).toBeGreaterThanOrEqual(truth[type] ?? 0);
      const over = Object.keys(truth).reduce((x, t) => x + ((got[t] ?? 0) - (truth[t] ?? 0)), 0);
      console.log(
        `crash (delta): kills after ${kills.join(", ")} ms; ${accepted} accepted / ${rejected} rejected requests; ` +
          `tokens delivered twice (crash between a send and its commit): ${over}`,
      );
    }
    const calls = Object.values(
      sumBy(
        temporality === "cumulative"
          ? cumulativeTotals(rx.points, "cline.tool.calls")
          : deltaTotals(rx.points, "cline.tool.calls"),
        "gen_ai.tool.name",
      ),
    ).reduce((x, v) => x + v, 0);
    const truthCalls = sessions.flatMap((s) => s.messages).reduce((x, m) => x + (m.tools?.length ?? 0), 0);
    if (temporality === "cumulative") expect(calls).toBe(truthCalls);
    else expect(calls).toBeGreaterThanOrEqual(truthCalls);
  }, 60_000);
});
