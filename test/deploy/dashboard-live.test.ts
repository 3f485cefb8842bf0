/**
 * The dashboard over the real product: `cline-otel run` with its Prometheus pull exporter over a copy
 * of the repo's recorded Cline sessions (fixtures/cline/<scenario>/home/.cline), a real Prometheus 2.42
 * scraping it every second, and every panel query sent through the HTTP API with Grafana's variables
 * filled in. The token numbers must equal `cline-otel report --json` over the same files.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  dataPanels,
  describe as describePanel,
  labelValuesVariables,
  loadDashboard,
  REPO,
  substitute,
} from "./support/dashboard.ts";
import { fixturesSeriesTtl, runFixturesScript } from "./support/fixtures-script.ts";
import { freePort, type Managed, productEnv, startManaged, waitFor } from "./support/processes.ts";
import { type RunningPrometheus, startPrometheus } from "./support/prometheus.ts";

const FIXTURES = join(REPO, "fixtures", "cline");
const SUB = { rateInterval: "1m", range: "1h", all: ".*" };

interface Totals {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  events: number;
  toolCalls: number;
}

let scratch = "";
let clineDir = "";
let captureDir = "";
let hasCaptures = false;
let daemon: Managed | undefined;
let prom: RunningPrometheus | undefined;
let report: Totals;
/** `report --captures --json` totals per stage: what Prometheus must hold. */
let captureReport: Record<string, { captures: number; estimatedTokens: number; payloadBytes: number }>;
let metricsText = "";

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "cline-otel-live-"));
  clineDir = join(scratch, "cline");
  // Merge every scenario's sessions (ids are unique) into one Cline tree with the compose fixtures
  // profile's own script, so the demo and this test see the same data; the fixtures stay untouched.
  const merged = runFixturesScript(FIXTURES, clineDir);
  if (merged.status !== 0) throw new Error(`merging ${FIXTURES} failed:\n${merged.stderr}`);
  captureDir = join(clineDir, "data", "provider-request-captures");
  hasCaptures = readdirSync(captureDir).length > 0;
  mkdirSync(join(scratch, "state"));

  // What the CLI itself reports over the same files, with a ledger of its own.
  const r = spawnSync(process.execPath, ["bin/cline-otel.js", "report", "--json"], {
    cwd: REPO,
    encoding: "utf8",
    env: productEnv({
      CLINE_DIR: clineDir,
      CLINE_CAPTURE_DIR: captureDir,
      CLINE_OTEL_STATE_DIR: join(scratch, "report-state"),
    }),
    timeout: 120_000,
  });
  if (r.status !== 0) throw new Error(`cline-otel report --json failed (${r.status}):\n${r.stderr}`);
  report = (JSON.parse(r.stdout) as { totals: Totals }).totals;
  const rc = spawnSync(
    process.execPath,
    ["bin/cline-otel.js", "report", "--captures", "--json", "--no-collect"],
    {
      cwd: REPO,
      encoding: "utf8",
      env: productEnv({ CLINE_DIR: clineDir, CLINE_OTEL_STATE_DIR: join(scratch, "report-state") }),
      timeout: 120_000,
    },
  );
  if (rc.status !== 0)
    throw new Error(`cline-otel report --captures --json failed (${rc.status}):\n${rc.stderr}`);
  captureReport = (JSON.parse(rc.stdout) as { totals: { byStage: typeof captureReport } }).totals.byStage;

  const port = await freePort();
  daemon = startManaged(
    "cline-otel run",
    process.execPath,
    ["bin/cline-otel.js", "run", "--poll-interval", "1"],
    {
      cwd: REPO,
      env: productEnv({
        CLINE_DIR: clineDir,
        CLINE_CAPTURE_DIR: captureDir,
        CLINE_OTEL_STATE_DIR: join(scratch, "state"),
        OTEL_METRICS_EXPORTER: "prometheus",
        // As the demo runs it (docker-compose.yml): the per-session panels and variable need it.
        OTEL_METRICS_INCLUDE_SESSION_ID: "true",
        // The recorded sessions are older than the default 7-day TTL: without the demo's own TTL
        // their series leave /metrics after the first scrape (this failed from 2026-12-07).
        CLINE_OTEL_SERIES_TTL: fixturesSeriesTtl(),
        OTEL_EXPORTER_PROMETHEUS_HOST: "127.0.0.1",
        OTEL_EXPORTER_PROMETHEUS_PORT: String(port),
      }),
    },
  );
  const running = daemon;
  metricsText = await waitFor(
    "cline-otel to serve its token counters on /metrics",
    async () => {
      if (running.exited()) throw new Error(`cline-otel run exited:\n${running.output()}`);
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      const text = await res.text();
      return /^cline_token_usage_total\{/m.test(text) ? text : undefined;
    },
    90_000,
    500,
  );
  // With the shipped alert rules: they must evaluate over what the real product serves.
  prom = await startPrometheus([`127.0.0.1:${port}`], {
    rules: Object.fromEntries(
      ["prometheus-rules.yml", "prometheus-budget.yml"].map((f) => [
        f,
        readFileSync(join(REPO, "otel-collector", f), "utf8"),
      ]),
    ),
  });
  const p = prom;
  const grand = report.input + report.output + report.cacheRead + report.cacheWrite;
  await waitFor(
    `Prometheus to hold all ${grand} tokens of the report`,
    async () => {
      const s = await p.query("sum(cline_token_usage_total)");
      return Number(s[0]?.value[1]) === grand ? true : undefined;
    },
    60_000,
    500,
  ).catch(async (e) => {
    const s = await p.query("sum by (type) (cline_token_usage_total)");
    throw new Error(
      `${(e as Error).message}\nPrometheus has ${JSON.stringify(s)}\ncline-otel said:\n${running.output()}`,
    );
  });
  // A few more scrapes so that range queries have points too.
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  metricsText = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
}, 240_000);

afterAll(async () => {
  await prom?.stop();
  await daemon?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
}, 60_000);

const dashboard = loadDashboard();
const panels = dataPanels(dashboard);
const isCapturePanel = (p: (typeof panels)[number]) =>
  (p.targets ?? []).some((t) => /cline_request_/.test(t.expr ?? ""));
const isEditPanel = (p: (typeof panels)[number]) =>
  (p.targets ?? []).some((t) =>
    /cline_lines_of_code_total|cline_code_edit_decisions_total/.test(t.expr ?? ""),
  );
/**
 * Panels that may rightly be empty here: firing alerts (nothing need fire over the fixtures; the
 * PromQL test makes one fire), compactions unless the product exports them, and the file edits
 * ("What Cline delivered") unless the fixtures' adapters emit edits (dashboard-promql.test.ts checks
 * their numbers).
 */
const mayBeEmpty = (p: (typeof panels)[number]) =>
  p.title === "Firing alerts" ||
  (p.title === "Compactions by strategy" && !/^cline_compactions_total\{/m.test(metricsText)) ||
  (isEditPanel(p) && !/^cline_code_edit_decisions_total\{/m.test(metricsText)) ||
  // The fixtures' agent opened no pull request (the recorded `gh pr create` failed): no series.
  (p.title === "Pull requests" && !/^cline_pull_requests_total\{/m.test(metricsText));

async function panelValues(title: string, label?: string): Promise<Record<string, number>> {
  const p = panels.find((x) => x.title === title);
  if (p === undefined) throw new Error(`no panel "${title}"`);
  const out: Record<string, number> = {};
  for (const s of await (prom as RunningPrometheus).query(substitute(p.targets?.[0]?.expr ?? "", SUB))) {
    out[label ? (s.metric[label] ?? "") : ""] = Number(s.value[1]);
  }
  return out;
}

describe("the dashboard over `cline-otel run` (Prometheus pull exporter) and Prometheus 2.42", () => {
  it("exposes the contract's counters under the names the dashboard uses", () => {
    for (const name of [
      "cline_token_usage_total",
      "cline_requests_total",
      "cline_tool_calls_total",
      "cline_tool_token_usage_total",
      "cline_cost_usage_total",
    ]) {
      expect(metricsText, name).toMatch(new RegExp(`^# TYPE ${name} counter$`, "m"));
    }
  });

  it("returns data for every panel query", async () => {
    const p = prom as RunningPrometheus;
    const empty: string[] = [];
    const end = Date.now() / 1000;
    // The prompt-growth row is among them: it needs the fixtures' captures, exported by cline-otel.
    expect(hasCaptures).toBe(true);
    expect(panels.some(isCapturePanel)).toBe(true);
    for (const panel of panels) {
      if (mayBeEmpty(panel)) continue;
      for (const t of panel.targets ?? []) {
        const expr = substitute(t.expr ?? "", SUB);
        if ((await p.query(expr)).length === 0) empty.push(`${describePanel(panel)} [${t.refId}]`);
        if (!t.instant && (await p.queryRange(expr, end - 10, end, 1)).length === 0) {
          empty.push(`${describePanel(panel)} [${t.refId}] range`);
        }
      }
    }
    expect(empty).toEqual([]);
  });

  it("evaluates every shipped alert rule without error over the product's own endpoint", async () => {
    const rules = await (prom as RunningPrometheus).rules();
    expect(rules.length).toBeGreaterThan(10);
    for (const r of rules)
      expect({ name: r.name, health: r.health, error: r.lastError ?? "" }).toEqual({
        name: r.name,
        health: "ok",
        error: "",
      });
    // The health counters the ClineOtel* rules watch are served under the names they use.
    expect(metricsText).toMatch(/^cline_otel_collector_passes_total\{/m);
  });

  it("fills every variable of the dashboard from the data", async () => {
    const p = prom as RunningPrometheus;
    const vars = labelValuesVariables(dashboard, SUB);
    expect(vars.map((v) => v.name).sort()).toEqual(["agent", "model", "project", "provider", "session"]);
    for (const v of vars) expect(await p.labelValues(v.label, v.selector), v.name).not.toEqual([]);
  });

  it("exports the capture metrics: both histograms whole, and the counters", () => {
    expect(hasCaptures).toBe(true);
    for (const name of [
      "cline_request_captures_total",
      "cline_request_retries_total",
      "cline_request_messages_total",
      "cline_request_tool_results_total",
      "cline_request_reasoning_blocks_total",
    ]) {
      expect(metricsText, name).toMatch(new RegExp(`^# TYPE ${name} counter$`, "m"));
    }
    for (const base of ["cline_request_payload_size", "cline_request_estimated_tokens"]) {
      expect(metricsText, base).toMatch(new RegExp(`^# TYPE ${base} histogram$`, "m"));
      for (const suffix of ["_bucket", "_sum", "_count"])
        expect(metricsText).toMatch(new RegExp(`^${base}${suffix}\\{`, "m"));
      expect(metricsText).toMatch(new RegExp(`^${base}_bucket\\{[^}]*cline_capture_stage="`, "m"));
    }
  });

  it("holds exactly the captures, estimated tokens and bytes per stage of `report --captures --json`", async () => {
    const p = prom as RunningPrometheus;
    const byStage = async (expr: string) =>
      Object.fromEntries(
        (await p.query(`sum by (cline_capture_stage) (${expr})`)).map((s) => [
          s.metric.cline_capture_stage ?? "",
          Number(s.value[1]),
        ]),
      );
    const want = (k: "captures" | "estimatedTokens" | "payloadBytes") =>
      Object.fromEntries(Object.entries(captureReport).map(([stage, t]) => [stage, t[k]]));
    expect(Object.keys(captureReport).length).toBeGreaterThan(0);
    expect(await byStage("cline_request_captures_total")).toEqual(want("captures"));
    expect(await byStage("cline_request_estimated_tokens_count")).toEqual(want("captures"));
    expect(await byStage("cline_request_estimated_tokens_sum")).toEqual(want("estimatedTokens"));
    expect(await byStage("cline_request_payload_size_sum")).toEqual(want("payloadBytes"));
  });

  it("counts exactly the tokens that `cline-otel report --json` counts", async () => {
    expect(await panelValues("Tokens by type", "type")).toEqual({
      input: report.input,
      output: report.output,
      cache_read: report.cacheRead,
      cache_write: report.cacheWrite,
    });
    expect(await panelValues("Requests")).toEqual({ "": report.events });
    expect(await panelValues("Tool calls")).toEqual({ "": report.toolCalls });
  });
});
