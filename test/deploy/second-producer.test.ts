/**
 * A second producer of `cline_*` and `gen_ai_*` names changes no shipped panel and no shipped rule
 * (docs/metrics.md "Query convention"). Two real Prometheus 2.42 servers load the shipped rules:
 * A scrapes cline-otel's series only; B scrapes the same series and a second producer that exports
 *  - Cline's own metrics, named as Cline's source names them (test/helpers/cline-own-export.ts),
 *    among them `cline.tool.calls.total`, which Prometheus stores as our `cline_tool_calls_total`;
 *  - every other name our queries read, with our label keys and values (a producer that would have
 *    to be told apart by the producer label alone), plus Cline's own `ulid`.
 * All data is recorded before either server starts, so both see the same constant series and every
 * query has one answer: every dashboard target and every rule expression must answer the same on A
 * and on B. The same queries without the producer matcher must answer differently (the second
 * producer does reach them: the test can fail).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Attributes, Meter } from "@opentelemetry/api";
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { CLINE_COUNTERS, CLINE_HISTOGRAMS, CLINE_TOOL_CALL_ATTRIBUTES } from "../helpers/cline-own-export.ts";
import { COUNTERS, HEALTH_COUNTERS, HISTOGRAMS, TOKEN_TYPES } from "./support/contract.ts";
import {
  dataPanels,
  describe as describePanel,
  loadDashboard,
  REPO,
  substitute,
} from "./support/dashboard.ts";
import { freePort, waitFor } from "./support/processes.ts";
import { type PromSample, type RunningPrometheus, startPrometheus } from "./support/prometheus.ts";
import { metricNames } from "./support/promql.ts";

const PRODUCER = { "cline_otel.producer": "cline-otel" };
const SUB = { rateInterval: "1m", range: "1h", all: ".*" };

/** The extra attribute sets each of our metrics is recorded with (every value a panel or rule filters on). */
function variants(name: string): Attributes[] {
  const tools = ["run_commands", "editor"];
  switch (name) {
    case "cline.token.usage":
      return TOKEN_TYPES.map((type) => ({ type }));
    case "cline.tool.token.usage":
      return tools.flatMap((t) => TOKEN_TYPES.map((type) => ({ "gen_ai.tool.name": t, type })));
    case "cline.tool.calls":
      return tools.flatMap((t) =>
        ["true", "false"].flatMap((known) =>
          ["success", "failure"].map((outcome) => ({
            "gen_ai.tool.name": t,
            "cline.usage.known": known,
            "cline.tool.outcome": outcome,
          })),
        ),
      );
    case "cline.tool.cost.usage":
      return tools.map((t) => ({ "gen_ai.tool.name": t }));
    case "cline.compactions":
      return [
        { "cline.compaction.strategy": "agentic" },
        { "cline.compaction.strategy": "basic", "cline.compaction.reason": "auto_compaction" },
      ];
    // The file edits (docs/metrics.md "What Cline delivered"): the decisions, sources and types the panels filter on.
    case "cline.lines_of_code":
      // accepted/added last: the second producer's weight on it (10^3) differs from its cost's, so
      // "cost per 1,000 accepted lines" without the matcher is not the same quotient.
      return ["rejected", "accepted"].flatMap((decision) =>
        ["removed", "added"].map((type) => ({ decision, type, "cline.lines.exact": "true" })),
      );
    case "cline.code_edit.decisions":
      return ["accepted", "rejected", "failed"].flatMap((decision) =>
        ["auto", "user"].map((source) => ({ decision, source })),
      );
    case "cline.request.payload.size":
    case "cline.request.estimated_tokens":
      return ["ai_sdk_prompt", "wire_request"].map((s) => ({ "cline.capture.stage": s }));
    case "gen_ai.client.token.usage":
      return ["input", "output"].map((t) => ({ "gen_ai.operation.name": "chat", "gen_ai.token.type": t }));
    case "gen_ai.client.operation.duration":
      return [{ "gen_ai.operation.name": "chat" }];
    case "cline.tool.duration":
      return tools.flatMap((t) =>
        ["success", "failure"].map((o) => ({
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": t,
          "cline.tool.outcome": o,
        })),
      );
    case "cline_otel.collector.problems":
      return [{ code: "partial-document" }];
    case "cline_otel.export.failures":
      return [{ exporter: "otlp http/protobuf" }];
    default:
      return [{}];
  }
}

/** The series dimensions: two sessions, a sub-agent, two models, two teams. */
function dims(tag: string): Attributes[] {
  const base = (session: string, agent: string, model: string, team: string, user: string): Attributes => ({
    "session.id": `${session}${tag}`,
    "cline.agent": agent,
    "cline.project": `/work/${session}${tag}`,
    "gen_ai.request.model": model,
    "gen_ai.provider.name": "anthropic",
    "team.id": team,
    "user.name": user,
    "vcs.repository.url.full": `https://git.example/acme/${session}`,
  });
  return [
    base("s1", "lead", "claude-sonnet", "payments", "alice"),
    base("s1", "subagent", "claude-sonnet", "payments", "alice"),
    base("s2", "lead", "deepseek", "platform", "bob"),
  ];
}

/**
 * Records every name the shipped queries read, once per call (a call is a round of growth). The
 * second producer's numbers are far larger than ours and weighted differently across types, agents
 * and outcomes (powers of ten by variant and by series), so that no ratio or quantile hides them.
 */
function recordOurNames(meter: Meter, common: Attributes, tag: string): void {
  const second = tag !== "";
  let n = 1;
  for (const name of [...Object.keys(COUNTERS), ...Object.keys(HEALTH_COUNTERS)]) {
    const c = meter.createCounter(name);
    (name.startsWith("cline_otel.") ? [{}] : dims(tag)).forEach((d, i) => {
      variants(name).forEach((v, j) => {
        c.add(second ? 1000 * 10 ** i * 10 ** j : n++, { ...common, ...d, ...v });
      });
    });
  }
  for (const name of Object.keys(HISTOGRAMS)) {
    const h = meter.createHistogram(name);
    for (const d of dims(tag))
      for (const v of variants(name))
        for (const x of [0.3, 2, 4, 8]) h.record(second ? x * 1000 : x, { ...common, ...d, ...v });
  }
}

/** Cline's own metrics, with the attributes Cline gives its tool calls. */
function recordClineNames(meter: Meter): void {
  const tool: Attributes = Object.fromEntries(CLINE_TOOL_CALL_ATTRIBUTES.map((k) => [k, `${k}-1`]));
  for (const name of CLINE_COUNTERS) meter.createCounter(name).add(1000, tool);
  for (const name of CLINE_HISTOGRAMS) meter.createHistogram(name).record(7, tool);
}

async function serve(scope: string, resource: Attributes) {
  const port = await freePort();
  const exporter = new PrometheusExporter({ host: "127.0.0.1", port });
  await exporter.startServer();
  const provider = new MeterProvider({ resource: resourceFromAttributes(resource), readers: [exporter] });
  return { target: `127.0.0.1:${port}`, provider, meter: provider.getMeter(scope) };
}

interface Rule {
  readonly record?: string;
  readonly alert?: string;
  readonly expr: string;
}
const RULE_FILES = ["prometheus-rules.yml", "prometheus-budget.yml"] as const;
const ruleText = (f: string) => readFileSync(join(REPO, "otel-collector", f), "utf8");
const rules: Rule[] = RULE_FILES.flatMap((f) =>
  (parse(ruleText(f)) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules),
);

/** A result as label set -> value (instance left out: the two servers see the same targets). */
function answer(samples: readonly PromSample[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples) {
    const labels = Object.entries(s.metric).filter(([k]) => k !== "instance");
    labels.sort(([a], [b]) => a.localeCompare(b));
    out.set(JSON.stringify(labels), Number(s.value[1]));
  }
  return out;
}

/**
 * The same answer: the same label sets, values within 25 % (NaN equals NaN). rate() and increase()
 * extrapolate from each server's own scrape times, which differ by up to the 1 s scrape interval;
 * the second producer's numbers are 1,000 times ours and more.
 */
function same(x: Map<string, number>, y: Map<string, number>): boolean {
  if (x.size !== y.size) return false;
  for (const [k, v] of x) {
    const w = y.get(k);
    if (w === undefined) return false;
    if (Number.isNaN(v) || Number.isNaN(w)) {
      if (!(Number.isNaN(v) && Number.isNaN(w))) return false;
      continue;
    }
    if (Math.abs(v - w) > 0.25 * Math.max(Math.abs(v), Math.abs(w)) + 1e-9) return false;
  }
  return true;
}

const withoutProducer = (expr: string) =>
  expr
    .replaceAll('cline_otel_producer="cline-otel", ', "")
    .replaceAll('{cline_otel_producer="cline-otel"}', "");

let a: RunningPrometheus;
let b: RunningPrometheus;
const providers: MeterProvider[] = [];
let at = 0;

beforeAll(async () => {
  const ours = await serve("cline-otel", { "service.name": "cline-otel", "service.instance.id": "ours" });
  const second = await serve("cline", { "service.name": "cline", "service.version": "3.89.2" });
  providers.push(ours.provider, second.provider);
  const grow = () => {
    recordOurNames(ours.meter, PRODUCER, "");
    recordClineNames(second.meter);
    recordOurNames(second.meter, { ulid: "01J0SECONDPRODUCER" }, "-cline");
  };
  grow();
  const ruleFiles = Object.fromEntries(RULE_FILES.map((f) => [f, ruleText(f)]));
  a = await startPrometheus([ours.target], { rules: ruleFiles });
  b = await startPrometheus([ours.target, second.target], { rules: ruleFiles });
  // Both servers hold both producers' series and have evaluated the recording rules over them.
  for (const [p, targets] of [
    [a, 1],
    [b, 2],
  ] as const) {
    await waitFor(
      `Prometheus to scrape ${targets} target(s) and record the cost rules`,
      async () => {
        const up = await p.query("sum(up)");
        const recorded = await p.query("cline:cost_usd:increase1h");
        return Number(up[0]?.value[1]) === targets && recorded.length > 0 ? true : undefined;
      },
      45_000,
    );
  }
  // A second round of growth, so that rate() and the quantiles have something to show: both servers
  // scrape it (the health counter of round 2 is twice round 1's).
  const passes = async (p: RunningPrometheus) =>
    Number(
      (await p.query('sum(cline_otel_collector_passes_total{cline_otel_producer="cline-otel"})'))[0]
        ?.value[1],
    );
  const first = await passes(a);
  await new Promise((r) => setTimeout(r, 2_000));
  grow();
  for (const p of [a, b])
    await waitFor(
      "Prometheus to scrape the second round",
      async () => ((await passes(p)) === 2 * first ? true : undefined),
      45_000,
    );
  // Every rule evaluated at least once more after the data was complete (evaluation every second).
  await new Promise((r) => setTimeout(r, 3_000));
  at = Date.now() / 1000;
}, 180_000);

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  for (const p of providers) await p.shutdown();
});

describe("a second producer of cline_* names changes no shipped query", () => {
  it("B holds the second producer, under our names too (cline_tool_calls_total from Cline's cline.tool.calls.total)", async () => {
    const names = new Set(
      (await b.query('count by (__name__) ({__name__=~"cline_.*|gen_ai_.*", ulid!=""})')).map(
        (s) => s.metric.__name__,
      ),
    );
    expect(names).toContain("cline_tool_calls_total");
    expect(names).toContain("cline_tokens_input_total");
    for (const name of Object.values(COUNTERS)) expect(names, name).toContain(name);
    const clineOwn = await b.query('cline_tool_calls_total{ulid="ulid-1"}');
    expect(clineOwn.map((s) => s.metric.tool)).toEqual(["tool-1"]);
  });

  it("every dashboard target answers the same on A and on B, and differently without the producer matcher", async () => {
    const changed: string[] = [];
    const blind: string[] = [];
    let compared = 0;
    for (const p of dataPanels(loadDashboard())) {
      for (const t of p.targets ?? []) {
        const expr = substitute(t.expr ?? "", SUB);
        const ours = metricNames(expr).some((m) => /^(cline|gen_ai)_/.test(m));
        if (!ours) continue;
        compared++;
        if (!same(answer(await a.query(expr, at)), answer(await b.query(expr, at))))
          changed.push(`${describePanel(p)} [${t.refId}]`);
        const bare = withoutProducer(expr);
        if (same(answer(await a.query(bare, at)), answer(await b.query(bare, at))))
          blind.push(`${describePanel(p)} [${t.refId}]`);
      }
    }
    expect(compared).toBeGreaterThan(30);
    expect(changed).toEqual([]);
    expect(blind).toEqual([]);
  });

  it("every rule expression answers the same on A and on B", async () => {
    const changed: string[] = [];
    let reached = 0;
    for (const r of rules) {
      if (!same(answer(await a.query(r.expr, at)), answer(await b.query(r.expr, at))))
        changed.push(r.record ?? r.alert ?? r.expr);
      const bare = withoutProducer(r.expr);
      if (bare !== r.expr && !same(answer(await a.query(bare, at)), answer(await b.query(bare, at))))
        reached++;
    }
    expect(rules.length).toBeGreaterThan(10);
    expect(changed).toEqual([]);
    // Without the matcher the second producer does change the recording rules (and more).
    expect(reached).toBeGreaterThanOrEqual(4);
  });
});
