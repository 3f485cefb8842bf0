/**
 * A team in one test: three `cline-otel run` processes (three developers: their own Cline
 * directory, ledger, CLINE_OTEL_USER, team.id in OTEL_RESOURCE_ATTRIBUTES and workspace
 * repository), each serving its Prometheus endpoint, scraped by one real Prometheus 2.42 with the
 * shipped rules. Every panel of the dashboard's Team row returns the right split, the splits sum
 * to the three ledgers' totals (`cline-otel report --json` of each), the rules evaluate per team,
 * and the token in a remote URL reaches no payload, log, ledger or Prometheus label.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MsgSpec, makeTree } from "../helpers/cline-tree.ts";
import { dataPanels, loadDashboard, REPO, substitute } from "./support/dashboard.ts";
import { freePort, type Managed, productEnv, startManaged, waitFor } from "./support/processes.ts";
import { type RunningPrometheus, startPrometheus } from "./support/prometheus.ts";

const TOKEN = "ghp_TEAMlive0123456789secret";
const SUB = { rateInterval: "1m", range: "1h", all: ".*" };

interface Dev {
  readonly user: string;
  readonly team: string;
  readonly repo: string;
  /** The remote as the developer's clone has it: carol's holds a token. */
  readonly remote: string;
  readonly messages: MsgSpec[];
}

// An hour before the run: a series whose last event is older than the series TTL (7 days) leaves the
// Prometheus endpoint after its first scrape, so a fixed date would turn this test off a week later.
const AT_MS = Date.now() - 3_600_000;

const m = (id: string, input: number, output: number, cacheRead: number, cacheWrite: number): MsgSpec => ({
  id,
  ts: AT_MS,
  model: "claude-sonnet-4-5-20250929",
  provider: "anthropic",
  // Cline's inputTokens include the cache counts (docs/cline-format.md).
  metrics: {
    inputTokens: input + cacheRead + cacheWrite,
    outputTokens: output,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
  },
  tools: ["read_files"],
});

const DEVS: readonly Dev[] = [
  {
    user: "alice",
    team: "payments",
    repo: "widgets",
    remote: "git@github.com:acme/widgets.git",
    messages: [m("a1", 1200, 300, 5000, 800), m("a2", 400, 120, 9000, 0)],
  },
  {
    user: "bob",
    team: "payments",
    repo: "api",
    remote: "https://github.com/acme/api.git",
    messages: [m("b1", 3000, 900, 0, 2000)],
  },
  {
    user: "carol",
    team: "platform",
    repo: "widgets",
    remote: `https://carol:${TOKEN}@github.com/acme/widgets.git?access_token=${TOKEN}`,
    messages: [m("c1", 800, 200, 12000, 100), m("c2", 600, 50, 3000, 0), m("c3", 90, 10, 0, 0)],
  },
];

interface Totals {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cost: number;
}

let scratch = "";
const daemons: Managed[] = [];
const ports: number[] = [];
const reports: Totals[] = [];
const metricsTexts: string[] = [];
let prom: RunningPrometheus | undefined;

function devEnv(d: Dev, i: number): Record<string, string> {
  return {
    CLINE_DIR: join(scratch, d.user, "home", ".cline"),
    CLINE_OTEL_USER: d.user,
    OTEL_RESOURCE_ATTRIBUTES: `team.id=${d.team},cost_center=cc-${i}`,
    CLINE_OTEL_REPOSITORY: "true",
    // The shared-backend settings of docs/backends.md.
    OTEL_METRICS_INCLUDE_SESSION_ID: "false",
    OTEL_METRICS_INCLUDE_PROJECT: "false",
    CLINE_OTEL_LOG_LEVEL: "debug",
  };
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "cline-otel-team-"));
  for (const [i, d] of DEVS.entries()) {
    const ws = join(scratch, d.user, "src", d.repo);
    mkdirSync(join(ws, ".git"), { recursive: true });
    writeFileSync(
      join(ws, ".git", "config"),
      `[core]\n\tbare = false\n[remote "origin"]\n\turl = ${d.remote}\n`,
    );
    writeFileSync(join(ws, ".git", "HEAD"), "ref: refs/heads/main\n");
    makeTree(join(scratch, d.user, "home"), [
      { id: `179601820000${i}_${d.user}`, cwd: ws, messages: d.messages },
    ]);
    const r = spawnSync(process.execPath, ["bin/cline-otel.js", "report", "--json"], {
      cwd: REPO,
      encoding: "utf8",
      env: productEnv({ ...devEnv(d, i), CLINE_OTEL_STATE_DIR: join(scratch, d.user, "report-state") }),
      timeout: 120_000,
    });
    if (r.status !== 0) throw new Error(`report --json for ${d.user} failed (${r.status}):\n${r.stderr}`);
    reports.push((JSON.parse(r.stdout) as { totals: Totals }).totals);
    const port = await freePort();
    ports.push(port);
    daemons.push(
      startManaged(
        `cline-otel run (${d.user})`,
        process.execPath,
        ["bin/cline-otel.js", "run", "--poll-interval", "1"],
        {
          cwd: REPO,
          env: productEnv({
            ...devEnv(d, i),
            CLINE_OTEL_STATE_DIR: join(scratch, d.user, "state"),
            OTEL_METRICS_EXPORTER: "prometheus",
            OTEL_EXPORTER_PROMETHEUS_HOST: "127.0.0.1",
            OTEL_EXPORTER_PROMETHEUS_PORT: String(port),
          }),
        },
      ),
    );
  }
  for (const [i, port] of ports.entries()) {
    const running = daemons[i] as Managed;
    metricsTexts[i] = await waitFor(
      `cline-otel (${DEVS[i]?.user}) to serve its cost on /metrics`,
      async () => {
        if (running.exited()) throw new Error(`cline-otel run exited:\n${running.output()}`);
        const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        return /^cline_cost_usage_total\{/m.test(text) ? text : undefined;
      },
      90_000,
      500,
    );
  }
  const budget = readFileSync(join(REPO, "otel-collector", "prometheus-budget.yml"), "utf8");
  prom = await startPrometheus(
    ports.map((p) => `127.0.0.1:${p}`),
    {
      rules: {
        "prometheus-rules.yml": readFileSync(join(REPO, "otel-collector", "prometheus-rules.yml"), "utf8"),
        "prometheus-budget.yml": budget,
      },
    },
  );
  const p = prom;
  const grand = reports.reduce((a, r) => a + r.input + r.output + r.cacheRead + r.cacheWrite, 0);
  await waitFor(
    `Prometheus to hold all ${grand} tokens of the three reports`,
    async () => {
      const s = await p.query("sum(cline_token_usage_total)");
      return Number(s[0]?.value[1]) === grand ? true : undefined;
    },
    60_000,
    500,
  );
  // A few more scrapes and rule evaluations.
  await new Promise((resolve) => setTimeout(resolve, 3_000));
}, 300_000);

afterAll(async () => {
  await prom?.stop();
  for (const d of daemons) await d.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
}, 60_000);

const teamPanels = dataPanels(loadDashboard()).filter((p) => p.row === "Team");

async function panel(title: string, labels: readonly string[]): Promise<Record<string, number>> {
  const p = teamPanels.find((x) => x.title === title);
  if (p === undefined) throw new Error(`no Team panel "${title}"`);
  const out: Record<string, number> = {};
  for (const s of await (prom as RunningPrometheus).query(substitute(p.targets?.[0]?.expr ?? "", SUB)))
    out[labels.map((l) => s.metric[l] ?? "").join("/")] = Number(s.value[1]);
  return out;
}

const tokens = (r: Totals) => r.input + r.output + r.cacheRead + r.cacheWrite;
function sumBy(key: (d: Dev) => string, value: (r: Totals) => number): Record<string, number> {
  const out: Record<string, number> = {};
  DEVS.forEach((d, i) => {
    out[key(d)] = (out[key(d)] ?? 0) + value(reports[i] as Totals);
  });
  return out;
}
function expectSplit(got: Record<string, number>, want: Record<string, number>): void {
  expect(Object.keys(got).sort()).toEqual(Object.keys(want).sort());
  for (const [k, v] of Object.entries(want)) expect(got[k], k).toBeCloseTo(v, 9);
}

describe("a team of three cline-otel processes in one Prometheus", () => {
  it("has every panel of the Team row", () => {
    expect(teamPanels.map((p) => p.title).sort()).toEqual(
      [
        "Cache hit ratio by team",
        "Cost by repository",
        "Cost by team",
        "Cost by user",
        "Tokens by repository",
        "Tokens by team",
        "Tokens by user",
        "Top spenders",
      ].sort(),
    );
    // Each report priced something: a cost split of zeros would prove nothing.
    for (const r of reports) expect(r.cost).toBeGreaterThan(0);
  });

  it("splits cost and tokens by team, user and repository, summing to the three ledgers", async () => {
    const url = (d: Dev) => `https://github.com/acme/${d.repo}`;
    expectSplit(
      await panel("Cost by team", ["team_id"]),
      sumBy(
        (d) => d.team,
        (r) => r.cost,
      ),
    );
    expectSplit(
      await panel("Cost by user", ["user_name"]),
      sumBy(
        (d) => d.user,
        (r) => r.cost,
      ),
    );
    expectSplit(
      await panel("Cost by repository", ["vcs_repository_url_full"]),
      sumBy(url, (r) => r.cost),
    );
    expectSplit(
      await panel("Tokens by team", ["team_id"]),
      sumBy((d) => d.team, tokens),
    );
    expectSplit(
      await panel("Tokens by user", ["user_name"]),
      sumBy((d) => d.user, tokens),
    );
    expectSplit(await panel("Tokens by repository", ["vcs_repository_url_full"]), sumBy(url, tokens));
    expectSplit(
      await panel("Top spenders", ["team_id", "user_name"]),
      sumBy(
        (d) => `${d.team}/${d.user}`,
        (r) => r.cost,
      ),
    );
    const cacheRead = sumBy(
      (d) => d.team,
      (r) => r.cacheRead,
    );
    const prompt = sumBy(
      (d) => d.team,
      (r) => r.input + r.cacheRead + r.cacheWrite,
    );
    expectSplit(
      await panel("Cache hit ratio by team", ["team_id"]),
      Object.fromEntries(Object.keys(prompt).map((t) => [t, (cacheRead[t] ?? 0) / (prompt[t] as number)])),
    );
    // The splits add up to the three ledgers' totals.
    const all = Object.values(await panel("Cost by team", ["team_id"])).reduce((a, b) => a + b, 0);
    expect(all).toBeCloseTo(
      reports.reduce((a, r) => a + r.cost, 0),
      9,
    );
  });

  it("evaluates the rules per team: cost recorded by team_id, the team budget alert healthy", async () => {
    const p = prom as RunningPrometheus;
    const rules = await p.rules();
    for (const name of [
      "cline:cost_usd:increase24h",
      "cline:team_budget_usd:daily",
      "ClineTeamDailyCostOverBudget",
    ]) {
      const r = rules.filter((x) => x.name === name);
      expect(r.length, name).toBeGreaterThan(0);
      for (const x of r) expect(x.health, `${name}: ${x.lastError ?? ""}`).toBe("ok");
    }
    const recorded = await p.query("cline:cost_usd:increase24h");
    expect(recorded.map((s) => `${s.metric.instance}/${s.metric.team_id}`).sort()).toEqual(
      ports.map((port, i) => `127.0.0.1:${port}/${DEVS[i]?.team}`).sort(),
    );
    const budgets = await p.query("cline:team_budget_usd:daily");
    expect(budgets.map((s) => s.metric.team_id).sort()).toEqual(["payments", "platform"]);
  });

  it("never lets the token of a remote URL out: not in /metrics, Prometheus, the logs or the ledgers", async () => {
    const p = prom as RunningPrometheus;
    for (const [i, port] of ports.entries()) {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(text).toContain("vcs_repository_url_full=");
      expect(text).not.toContain(TOKEN);
      expect(metricsTexts[i]).not.toContain(TOKEN);
      expect((daemons[i] as Managed).output()).not.toContain(TOKEN);
    }
    const urls = await p.labelValues("vcs_repository_url_full", "cline_cost_usage_total");
    expect(urls.sort()).toEqual(["https://github.com/acme/api", "https://github.com/acme/widgets"]);
    const every = await p.query('{__name__=~"cline_.+"}');
    expect(JSON.stringify(every)).not.toContain(TOKEN);
    // Every file of every ledger (state and report), byte for byte.
    const walk = (dir: string): string[] =>
      readdirSync(dir).flatMap((f) => {
        const full = join(dir, f);
        return statSync(full).isDirectory() ? walk(full) : [full];
      });
    for (const d of DEVS)
      for (const dir of ["state", "report-state"])
        for (const f of walk(join(scratch, d.user, dir)))
          expect(readFileSync(f).includes(TOKEN), f).toBe(false);
    // The workspaces were only read.
    for (const d of DEVS)
      expect(readdirSync(join(scratch, d.user, "src", d.repo, ".git")).sort()).toEqual(["HEAD", "config"]);
  });
});
