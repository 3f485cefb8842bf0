/**
 * Every dashboard query, run by a real Prometheus (Debian's 2.42) against the real OpenTelemetry JS
 * Prometheus exporter serving contract-shaped metrics from this process. Independent of the product:
 * it checks the PromQL itself (names, labels, the born-in-window idiom, the numbers), so a dashboard
 * change is tested even where cline-otel cannot run. dashboard-live.test.ts does the same over the
 * real product.
 */

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, TOKEN_TYPES } from "./support/contract.ts";
import {
  dataPanels,
  describe as describePanel,
  labelValuesVariables,
  loadDashboard,
  REPO,
  substitute,
} from "./support/dashboard.ts";
import { freePort, waitFor } from "./support/processes.ts";
import { type RunningPrometheus, startPrometheus } from "./support/prometheus.ts";

type Attrs = Record<string, string>;
type TokenType = (typeof TOKEN_TYPES)[number];

interface Usage {
  readonly attrs: Attrs;
  readonly tokens: Readonly<Record<TokenType, number>>;
  readonly requests: number;
  readonly cost: number;
  readonly tools: readonly { readonly name: string; readonly known: boolean; readonly share: number }[];
  readonly compactions?: readonly { readonly strategy: "agentic" | "basic"; readonly reason: string }[];
  /** File edits (cline.lines_of_code, cline.code_edit.decisions), with the team labels of their machine. */
  readonly edits?: readonly Edit[];
  /** Active time (s), commits and pull requests (cline.active_time, cline.commits, cline.pull_requests). */
  readonly activity?: readonly Activity[];
}

interface Activity {
  readonly team: string;
  readonly user: string;
  readonly repo: string;
  readonly userS: number;
  readonly agentS: number;
  readonly commits: number;
  readonly prs: number;
}

interface Edit {
  readonly team: string;
  readonly user: string;
  readonly repo: string;
  readonly tool: string;
  readonly decision: "accepted" | "rejected" | "failed";
  readonly source: "auto" | "user" | "unknown";
  readonly added: number;
  readonly removed: number;
  readonly exact: boolean;
}

const edit = (team: string, user: string, repo: string, over: Partial<Edit>): Edit => ({
  team,
  user,
  repo,
  tool: "editor",
  decision: "accepted",
  source: "auto",
  added: 10,
  removed: 2,
  exact: true,
  ...over,
});
const REPO_A = "https://example.com/acme/alpha";
const REPO_B = "https://example.com/acme/beta";

/** On every point cline-otel exports (src/export/attributes.ts), selected by every shipped query. */
const PRODUCER: Attrs = { "cline_otel.producer": "cline-otel" };

const lead = (session: string, project: string, model: string, provider: string): Attrs => ({
  ...PRODUCER,
  "session.id": session,
  "cline.agent": "lead",
  "cline.project": project,
  "gen_ai.request.model": model,
  "gen_ai.provider.name": provider,
});

const S1 = lead("1796018194209_nfmy0", "/work/alpha", "claude-sonnet-4-5-20250929", "anthropic");
const S1_SUB = { ...S1, "cline.agent": "subagent" };
const S2 = lead("1796018200459_9svp0", "/work/beta", "mock-model", "openai-compatible");
const S3 = lead("1796018300000_abcde", "/work/alpha", "deepseek-flash", "deepseek");

/** Phase 1: history that exists when the exporter first serves. */
const PHASE1: readonly Usage[] = [
  {
    attrs: S1,
    tokens: { input: 221, output: 323, cache_read: 7002, cache_write: 729 },
    requests: 3,
    cost: 0.01034235,
    tools: [
      { name: "run_commands", known: true, share: 0.5 },
      { name: "read_files", known: true, share: 0.5 },
    ],
    compactions: [{ strategy: "agentic", reason: "context_window" }],
    edits: [
      edit("core", "ana", REPO_A, { added: 120, removed: 30 }),
      edit("core", "ana", REPO_A, { decision: "rejected", source: "user", added: 40, removed: 5 }),
      edit("core", "ana", REPO_A, { decision: "failed", source: "unknown", added: 0, removed: 0 }),
      edit("core", "ana", REPO_A, { tool: "write_to_file", added: 300, removed: 0, exact: false }),
    ],
    activity: [{ team: "core", user: "ana", repo: REPO_A, userS: 61.5, agentS: 240.25, commits: 2, prs: 1 }],
  },
  {
    attrs: S1_SUB,
    tokens: { input: 4000, output: 200, cache_read: 0, cache_write: 0 },
    requests: 2,
    cost: 0.015,
    tools: [{ name: "editor", known: true, share: 1 }],
  },
  {
    attrs: S2,
    tokens: { input: 7802, output: 57, cache_read: 4205, cache_write: 0 },
    requests: 1,
    cost: 0,
    tools: [{ name: "run_commands", known: false, share: 0 }],
  },
];

/** Phase 2: an old series grows a little, and a brand-new session appears. */
const PHASE2: readonly Usage[] = [
  {
    attrs: S1,
    tokens: { input: 10, output: 20, cache_read: 30, cache_write: 0 },
    requests: 1,
    cost: 0.0005,
    tools: [{ name: "run_commands", known: true, share: 1 }],
  },
  {
    attrs: S3,
    tokens: { input: 5000, output: 600, cache_read: 1200, cache_write: 0 },
    requests: 2,
    cost: 0.0042,
    tools: [{ name: "apply_patch", known: true, share: 1 }],
    compactions: [{ strategy: "basic", reason: "context_window" }],
    edits: [
      edit("web", "bo", REPO_B, { tool: "apply_patch", added: 55, removed: 11 }),
      edit("web", "bo", REPO_B, { tool: "apply_patch", decision: "rejected", source: "user", added: 7 }),
      edit("core", "cy", REPO_A, { tool: "apply_patch", source: "unknown", added: 9, removed: 9 }),
    ],
    activity: [
      { team: "web", user: "bo", repo: REPO_B, userS: 30, agentS: 90.5, commits: 1, prs: 0 },
      { team: "core", user: "cy", repo: REPO_A, userS: 12, agentS: 0, commits: 3, prs: 2 },
    ],
  },
];

/** The outcome recorded for the i-th tool call of a usage (its duration and its count agree). */
const outcomeOf = (i: number): string => (i % 2 === 1 ? "failure" : "success");

function totals(usages: readonly Usage[]): Record<TokenType, number> {
  const t: Record<TokenType, number> = { input: 0, output: 0, cache_read: 0, cache_write: 0 };
  for (const u of usages) for (const k of TOKEN_TYPES) t[k] += u.tokens[k];
  return t;
}

let prom: RunningPrometheus;
let provider: MeterProvider;
let record: (usages: readonly Usage[]) => void;
let phase2At = 0;

/** Wait until Prometheus holds a sample taken after `ms` for the total of input tokens `expected`. */
async function scrapedTotal(expected: number): Promise<void> {
  await waitFor(
    `Prometheus to scrape input total ${expected}`,
    async () => {
      const r = await prom.query('sum(cline_token_usage_total{type="input"})');
      return Number(r[0]?.value[1]) === expected ? true : undefined;
    },
    // A wait, not a timing claim: a loaded 2-core CI machine took over 20 s for a first scrape once.
    45_000,
  );
}

beforeAll(async () => {
  const port = await freePort();
  const exporter = new PrometheusExporter({ host: "127.0.0.1", port });
  await exporter.startServer();
  provider = new MeterProvider({
    resource: resourceFromAttributes({ "service.name": "cline-otel", "service.instance.id": "synthetic" }),
    readers: [exporter],
  });
  const meter = provider.getMeter("cline-otel");
  const tokens = meter.createCounter(Object.keys(COUNTERS)[0] as string, { unit: "{token}" });
  const requests = meter.createCounter("cline.requests", { unit: "{request}" });
  const calls = meter.createCounter("cline.tool.calls", { unit: "{call}" });
  const toolTokens = meter.createCounter("cline.tool.token.usage", { unit: "{token}" });
  const cost = meter.createCounter("cline.cost.usage", { unit: "USD" });
  const toolCost = meter.createCounter("cline.tool.cost.usage", { unit: "USD" });
  const payload = meter.createHistogram(Object.keys(HISTOGRAMS)[0] as string, { unit: "By" });
  const estimated = meter.createHistogram("cline.request.estimated_tokens", { unit: "{token}" });
  const compactions = meter.createCounter("cline.compactions", { unit: "{compaction}" });
  // The GenAI histograms (issue 13), with the same attribute keys as src/export/genai/metrics.ts.
  const genaiTokens = meter.createHistogram("gen_ai.client.token.usage", { unit: "{token}" });
  const opDuration = meter.createHistogram("gen_ai.client.operation.duration", { unit: "s" });
  const toolDuration = meter.createHistogram("cline.tool.duration", { unit: "s" });
  const lines = meter.createCounter("cline.lines_of_code", { unit: "{line}" });
  const decisions = meter.createCounter("cline.code_edit.decisions", { unit: "{edit}" });
  const activeTime = meter.createCounter("cline.active_time", { unit: "s" });
  const commits = meter.createCounter("cline.commits", { unit: "{commit}" });
  const pullRequests = meter.createCounter("cline.pull_requests", { unit: "{pull_request}" });
  record = (usages) => {
    for (const u of usages) {
      // As src/export/activity.ts: active time by type, commits and pull requests with the common attributes.
      for (const a of u.activity ?? []) {
        const at = { ...u.attrs, "team.id": a.team, "user.name": a.user, "vcs.repository.url.full": a.repo };
        if (a.userS > 0) activeTime.add(a.userS, { ...at, type: "user" });
        if (a.agentS > 0) activeTime.add(a.agentS, { ...at, type: "agent" });
        if (a.commits > 0) commits.add(a.commits, at);
        if (a.prs > 0) pullRequests.add(a.prs, at);
      }
      // As src/export/translate.ts: decisions for every edit, lines for accepted and rejected ones.
      for (const e of u.edits ?? []) {
        const a = {
          ...u.attrs,
          "team.id": e.team,
          "user.name": e.user,
          "vcs.repository.url.full": e.repo,
          "gen_ai.tool.name": e.tool,
          operation: "modify",
          decision: e.decision,
          source: e.source,
          language: "typescript",
        };
        decisions.add(1, a);
        if (e.decision === "failed") continue;
        const exact = { "cline.lines.exact": String(e.exact) };
        lines.add(e.added, { ...a, ...exact, type: "added" });
        lines.add(e.removed, { ...a, ...exact, type: "removed" });
      }
      for (const type of TOKEN_TYPES) tokens.add(u.tokens[type], { ...u.attrs, type });
      requests.add(u.requests, u.attrs);
      cost.add(u.cost, u.attrs);
      const chat = {
        ...PRODUCER,
        "session.id": u.attrs["session.id"] ?? "",
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": u.attrs["gen_ai.request.model"] ?? "",
        "gen_ai.provider.name": u.attrs["gen_ai.provider.name"] ?? "",
      };
      for (let i = 0; i < u.requests; i++) {
        const all = (u.tokens.input + u.tokens.cache_read + u.tokens.cache_write) / u.requests;
        genaiTokens.record(all, { ...chat, "gen_ai.token.type": "input" });
        genaiTokens.record(u.tokens.output / u.requests, { ...chat, "gen_ai.token.type": "output" });
        opDuration.record(0.8 + i, chat);
      }
      u.tools.forEach((tool, i) => {
        // A call whose messages carry no usable ts has no duration, but is a call (counted below).
        if (!tool.known) return;
        toolDuration.record(0.2 + i, {
          ...chat,
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": tool.name,
          "cline.tool.outcome": outcomeOf(i),
        });
      });
      u.tools.forEach((tool, i) => {
        // Final calls by outcome (src/export/translate.ts), the same outcomes as their durations.
        calls.add(1, {
          ...u.attrs,
          "gen_ai.tool.name": tool.name,
          "cline.usage.known": String(tool.known),
          "cline.tool.outcome": outcomeOf(i),
        });
      });
      for (const tool of u.tools) {
        if (!tool.known) continue;
        const ta = { ...u.attrs, "gen_ai.tool.name": tool.name };
        for (const type of TOKEN_TYPES) toolTokens.add(u.tokens[type] * tool.share, { ...ta, type });
        toolCost.add(u.cost * tool.share, ta);
      }
      for (const c of u.compactions ?? []) {
        compactions.add(1, {
          ...u.attrs,
          "cline.compaction.strategy": c.strategy,
          "cline.compaction.reason": c.reason,
        });
      }
      for (const stage of ["ai_sdk_prompt", "wire_request"]) {
        const bytes = (u.tokens.input + u.tokens.cache_read) * 3 + (stage === "wire_request" ? 400 : 0);
        payload.record(bytes, { ...u.attrs, "cline.capture.stage": stage });
        estimated.record(Math.ceil(bytes / 3), { ...u.attrs, "cline.capture.stage": stage });
      }
    }
  };
  // The shipped alert rules, with a budget of $0 so that ClineDailyCostOverBudget fires on the
  // growth of phase 2 (the Firing alerts panel needs something to show).
  const rulesDir = join(REPO, "otel-collector");
  prom = await startPrometheus([`127.0.0.1:${port}`], {
    rules: {
      "prometheus-rules.yml": readFileSync(join(rulesDir, "prometheus-rules.yml"), "utf8"),
      "prometheus-budget.yml": readFileSync(join(rulesDir, "prometheus-budget.yml"), "utf8").replace(
        "vector(20)",
        "vector(0)",
      ),
    },
  });
  record(PHASE1);
  await scrapedTotal(totals(PHASE1).input);
  // Let the old series age past the short window used below.
  await new Promise((r) => setTimeout(r, 4_000));
  phase2At = Date.now() / 1000;
  record(PHASE2);
  await scrapedTotal(totals([...PHASE1, ...PHASE2]).input);
  await new Promise((r) => setTimeout(r, 3_000));
  const p = prom;
  await waitFor(
    "the budget alert to fire",
    async () =>
      (await p.query('ALERTS{alertname="ClineDailyCostOverBudget", alertstate="firing"}')).length > 0
        ? true
        : undefined,
    45_000,
  );
}, 180_000);

afterAll(async () => {
  await prom?.stop();
  await provider?.shutdown();
});

const dashboard = loadDashboard();
const SUB = { rateInterval: "1m", range: "1h", all: ".*" };

describe("dashboard PromQL on Prometheus 2.42 over @opentelemetry/exporter-prometheus", () => {
  it("returns data for every panel query (instant and range)", async () => {
    const empty: string[] = [];
    const end = Date.now() / 1000;
    for (const p of dataPanels(dashboard)) {
      for (const t of p.targets ?? []) {
        const expr = substitute(t.expr ?? "", SUB);
        const instant = await prom.query(expr);
        if (instant.length === 0) empty.push(`${describePanel(p)} [${t.refId}] instant`);
        if (!t.instant) {
          const range = await prom.queryRange(expr, end - 10, end, 1);
          if (range.length === 0) empty.push(`${describePanel(p)} [${t.refId}] range`);
        }
      }
    }
    expect(empty).toEqual([]);
  });

  it("evaluates every shipped alert rule without error over these names", async () => {
    const rules = await (prom as RunningPrometheus).rules();
    expect(rules.length).toBeGreaterThan(10);
    for (const r of rules)
      expect({ name: r.name, health: r.health, error: r.lastError ?? "" }).toEqual({
        name: r.name,
        health: "ok",
        error: "",
      });
  });

  it("shows the firing alert, and counts compactions by strategy", async () => {
    const alerts = dataPanels(dashboard).find((p) => p.title === "Firing alerts");
    const firing = await prom.query(substitute(alerts?.targets?.[0]?.expr ?? "", SUB));
    expect(firing.map((s) => [s.metric.alertname, s.metric.severity])).toEqual([
      ["ClineDailyCostOverBudget", "critical"],
    ]);
    const panel = dataPanels(dashboard).find((p) => p.title === "Compactions by strategy");
    // Both series were born inside the window: counted in full, 1 each.
    const expr = substitute(panel?.targets?.[0]?.expr ?? "", { ...SUB, rateInterval: "1h" });
    const got = Object.fromEntries(
      (await prom.query(expr)).map((s) => [s.metric.cline_compaction_strategy, Number(s.value[1])]),
    );
    expect(got).toEqual({ agentic: 1, basic: 1 });
  });

  it("fills every variable of the dashboard from the data", async () => {
    const p = prom as RunningPrometheus;
    const vars = labelValuesVariables(dashboard, SUB);
    expect(vars.map((v) => v.name).sort()).toEqual(["agent", "model", "project", "provider", "session"]);
    for (const v of vars) expect(await p.labelValues(v.label, v.selector), v.name).not.toEqual([]);
  });

  it("Tokens by type equals every token recorded, the first export of each series included", async () => {
    const panel = dataPanels(dashboard).find((p) => p.title === "Tokens by type");
    const expr = substitute(panel?.targets?.[0]?.expr ?? "", SUB);
    const got: Record<string, number> = {};
    for (const s of await prom.query(expr)) got[s.metric.type ?? "?"] = Number(s.value[1]);
    expect(got).toEqual(totals([...PHASE1, ...PHASE2]));
  });

  it("counts a series born inside the window in full and an older one only by its increase", async () => {
    const panel = dataPanels(dashboard).find((p) => p.title === "Tokens by type over time");
    // A window that starts after phase 1 and ends after phase 2: S1 existed at its start, S3 did not.
    const at = phase2At + 3;
    const expr = substitute(panel?.targets?.[0]?.expr ?? "", { ...SUB, rateInterval: "6s" }).replace(
      'type=~".*"',
      'type="input"',
    );
    const byType = Object.fromEntries(
      (await prom.query(expr, at)).map((s) => [s.metric.type, Number(s.value[1])]),
    );
    const grown = (PHASE2[0] as Usage).tokens.input; // 10, extrapolated by increase()
    const born = (PHASE2[1] as Usage).tokens.input; // 5000, counted exactly
    const input = byType.input ?? Number.NaN;
    expect(input).toBeGreaterThanOrEqual(born + grown * 0.5);
    expect(input).toBeLessThanOrEqual(born + grown * 2.5);
    // Without the idiom S1's whole history (221 + 10) would be in it, or S3 (born) would be missing.
    expect(input).toBeLessThan(born + (PHASE1[0] as Usage).tokens.input);
  });

  it("computes the ratios from the same totals", async () => {
    const all = totals([...PHASE1, ...PHASE2]);
    const query = async (title: string) => {
      const p = dataPanels(dashboard).find((x) => x.title === title);
      const r = await prom.query(substitute(p?.targets?.[0]?.expr ?? "", SUB));
      return Number(r[0]?.value[1]);
    };
    expect(await query("Cache hit ratio")).toBeCloseTo(
      all.cache_read / (all.input + all.cache_read + all.cache_write),
      9,
    );
    const sub = (PHASE1[1] as Usage).tokens;
    const subTotal = sub.input + sub.output + sub.cache_read + sub.cache_write;
    const grand = all.input + all.output + all.cache_read + all.cache_write;
    expect(await query("Sub-agent share")).toBeCloseTo(subTotal / grand, 9);
    expect(await query("Sessions")).toBe(3);
    expect(await query("Tool calls with unknown cost")).toBe(1);
  });

  it("tool failure rate and calls by outcome come from cline.tool.calls by outcome, every call counted", async () => {
    // What was recorded (outcomeOf).
    const want: Record<string, { failure: number; all: number }> = {};
    const outcomes: Record<string, number> = {};
    for (const u of [...PHASE1, ...PHASE2]) {
      u.tools.forEach((tool, i) => {
        const w = want[tool.name] ?? { failure: 0, all: 0 };
        want[tool.name] = w;
        const outcome = outcomeOf(i);
        if (outcome === "failure") w.failure++;
        w.all++;
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      });
    }
    const byLabel = async (title: string, label: string) => {
      const p = dataPanels(dashboard).find((x) => x.title === title);
      const out: Record<string, number> = {};
      for (const r of await prom.query(substitute(p?.targets?.[0]?.expr ?? "", SUB)))
        out[r.metric[label] ?? ""] = Number(r.value[1]);
      return out;
    };
    const rates = await byLabel("Tool failure rate by tool", "gen_ai_tool_name");
    expect(Object.keys(rates).sort()).toEqual(Object.keys(want).sort());
    for (const [tool, w] of Object.entries(want)) expect(rates[tool], tool).toBeCloseTo(w.failure / w.all, 9);
    expect(Object.values(want).some((w) => w.failure > 0)).toBe(true);
    expect(await byLabel("Tool calls by outcome", "cline_tool_outcome")).toEqual(outcomes);
  });

  it("What Cline delivered: accepted lines per team, user and repository, the acceptance rate, cost per 1,000 lines", async () => {
    const edits = [...PHASE1, ...PHASE2].flatMap((u) => u.edits ?? []);
    const accepted = edits.filter((e) => e.decision === "accepted");
    const sumBy = (key: (e: Edit) => string) => {
      const out: Record<string, number> = {};
      for (const e of accepted) out[key(e)] = (out[key(e)] ?? 0) + e.added;
      return out;
    };
    const byLabel = async (title: string, label: string) => {
      const p = dataPanels(dashboard).find((x) => x.title === title);
      expect(p, title).toBeDefined();
      const out: Record<string, number> = {};
      for (const r of await prom.query(substitute(p?.targets?.[0]?.expr ?? "", SUB)))
        out[r.metric[label] ?? ""] = Number(r.value[1]);
      return out;
    };
    expect(await byLabel("Lines accepted by team", "team_id")).toEqual(sumBy((e) => e.team));
    expect(await byLabel("Lines accepted by user", "user_name")).toEqual(sumBy((e) => e.user));
    expect(await byLabel("Lines accepted by repository", "vcs_repository_url_full")).toEqual(
      sumBy((e) => e.repo),
    );
    const decided = edits.filter((e) => e.decision !== "failed");
    const one = async (title: string) => Number((await byLabel(title, "__none__"))[""]);
    expect(await one("Edit acceptance rate")).toBeCloseTo(accepted.length / decided.length, 9);
    const rateByTeam = await byLabel("Edit acceptance rate by team", "team_id");
    for (const team of ["core", "web"]) {
      const d = decided.filter((e) => e.team === team);
      expect(rateByTeam[team], team).toBeCloseTo(
        d.filter((e) => e.decision === "accepted").length / d.length,
        9,
      );
    }
    const cost = [...PHASE1, ...PHASE2].reduce((n, u) => n + u.cost, 0);
    const acceptedLines = accepted.reduce((n, e) => n + e.added, 0);
    expect(await one("Cost per 1,000 accepted lines")).toBeCloseTo(cost / (acceptedLines / 1000), 9);
    // Failed edits: decisions only, no lines.
    const byDecision = await byLabel("Lines by decision and type", "decision");
    expect(Object.keys(byDecision).sort()).toEqual(["accepted", "rejected"]);
  });

  it("What Cline delivered: commits, pull requests, commits per repository, active time per user and type", async () => {
    const all = [...PHASE1, ...PHASE2].flatMap((u) => u.activity ?? []);
    const query = async (title: string) => {
      const p = dataPanels(dashboard).find((x) => x.title === title);
      expect(p, title).toBeDefined();
      return prom.query(substitute(p?.targets?.[0]?.expr ?? "", SUB));
    };
    const one = async (title: string) => Number((await query(title))[0]?.value[1]);
    expect(await one("Commits")).toBe(all.reduce((n, a) => n + a.commits, 0));
    expect(await one("Pull requests")).toBe(all.reduce((n, a) => n + a.prs, 0));
    const byRepo: Record<string, number> = {};
    for (const a of all) byRepo[a.repo] = (byRepo[a.repo] ?? 0) + a.commits;
    const gotRepo: Record<string, number> = {};
    for (const r of await query("Commits by repository"))
      gotRepo[r.metric.vcs_repository_url_full ?? ""] = Number(r.value[1]);
    expect(gotRepo).toEqual(byRepo);
    const want: Record<string, number> = {};
    for (const a of all) {
      if (a.userS > 0) want[`${a.user}|user`] = (want[`${a.user}|user`] ?? 0) + a.userS;
      if (a.agentS > 0) want[`${a.user}|agent`] = (want[`${a.user}|agent`] ?? 0) + a.agentS;
    }
    const got: Record<string, number> = {};
    for (const r of await query("Active time by user"))
      got[`${r.metric.user_name}|${r.metric.type}`] = Number(r.value[1]);
    expect(Object.keys(got).sort()).toEqual(Object.keys(want).sort());
    for (const [k, v] of Object.entries(want)) expect(got[k], k).toBeCloseTo(v, 9);
  });
});
