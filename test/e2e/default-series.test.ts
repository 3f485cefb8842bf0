/**
 * The design card, by default (issue 28): a `run --once` with nothing set puts `session.id`,
 * `cline.project`, `gen_ai.request.model` and `gen_ai.provider.name` on every token point, as
 * Claude Code's OTEL_METRICS_INCLUDE_SESSION_ID (default true) does. The team setting that folds
 * the session away is tested in test/export/default-series.test.ts and test/e2e/flags.test.ts.
 */
import { describe, expect, it } from "vitest";
import { startReceiver } from "../export/helpers/otlp-receiver.ts";
import { onceArgs, otlpEnv, runCliAsync } from "./helpers/cli.ts";
import { e2eScratch } from "./helpers/scratch.ts";
import { metricsFor, type SessionSpec, writeSession } from "./helpers/sessions.ts";

const scratch = e2eScratch();

/** Three sessions over two projects and two model/provider pairs, with tool calls. */
const SPECS: readonly SessionSpec[] = [0, 1, 2].map((n) => ({
  sessionId: `179600000010${n}_dflt`,
  cwd: `/w/project-${n % 2}`,
  messages: [0, 1].map((i) => ({
    id: `msg_${n}_${i}`,
    model: n === 2 ? "gpt-5" : "claude-sonnet-4-5-20250929",
    provider: n === 2 ? "openai" : "anthropic",
    metrics: metricsFor(n * 10 + i + 1),
    tools: i === 0 ? ["read_files"] : [],
  })),
}));

describe("a default run --once", () => {
  it("puts session.id, cline.project, gen_ai.request.model and gen_ai.provider.name on every token counter point", async () => {
    const { work, sessionsDir } = scratch.withSessions("e2e-default-series-");
    for (const s of SPECS) writeSession(sessionsDir, s);
    const rx = scratch.receiver(await startReceiver());
    const r = await runCliAsync(onceArgs(work, sessionsDir), otlpEnv(rx.url));
    expect(r.status, r.stderr).toBe(0);

    // The design card's counters: input, output, cache read and cache write tokens, and per tool.
    const counters = rx.points.filter(
      (p) => p.metric === "cline.token.usage" || p.metric === "cline.tool.token.usage",
    );
    const truth = new Map(
      SPECS.map((s) => [s.sessionId, [s.cwd, s.messages[0]?.model, s.messages[0]?.provider]]),
    );
    for (const p of counters) {
      const a = p.attributes;
      const want = truth.get(String(a["session.id"]));
      expect(want, `${p.metric} ${JSON.stringify(a)}`).toBeDefined();
      expect([a["cline.project"], a["gen_ai.request.model"], a["gen_ai.provider.name"]]).toEqual(want);
    }
    // Each session is its own series of every type, on both counters.
    for (const metric of ["cline.token.usage", "cline.tool.token.usage"]) {
      const keys = counters
        .filter((p) => p.metric === metric)
        .map((p) => `${p.attributes["session.id"]} ${p.attributes.type}`);
      const want = SPECS.flatMap((s) =>
        ["input", "output", "cache_read", "cache_write"].map((t) => `${s.sessionId} ${t}`),
      );
      expect(new Set(keys), metric).toEqual(new Set(want));
    }
    // The GenAI histogram of token usage carries the session, model and provider too (and, by the
    // conventions' attribute set, no cline.project: docs/metrics.md "GenAI semantic-convention histograms").
    const genai = rx.points.filter((p) => p.metric === "gen_ai.client.token.usage");
    expect(new Set(genai.map((p) => p.attributes["session.id"]))).toEqual(
      new Set(SPECS.map((s) => s.sessionId)),
    );
    for (const p of genai) {
      const want = truth.get(String(p.attributes["session.id"]));
      expect([p.attributes["gen_ai.request.model"], p.attributes["gen_ai.provider.name"]]).toEqual(
        want?.slice(1),
      );
    }
  });
});
