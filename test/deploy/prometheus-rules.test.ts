/**
 * otel-collector/prometheus-rules.yml and prometheus-budget.yml: `promtool check rules`, and
 * `promtool test rules` over test/deploy/rules/*.test.yml (synthetic series that make every alert
 * fire and not fire, in both the direct-scrape and the behind-a-collector label shapes). The unit
 * tests run on a copy of the rules without annotations, so that they state labels only; the
 * annotations are checked here (and their templates by `promtool check rules`).
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { COUNTER_NAMES, HEALTH_COUNTERS, promName } from "./support/contract.ts";
import { REPO } from "./support/dashboard.ts";
import { PROMTOOL_BIN, requireBinary } from "./support/prometheus.ts";
import { metricNames } from "./support/promql.ts";

const RULES = join(REPO, "otel-collector", "prometheus-rules.yml");
const BUDGET = join(REPO, "otel-collector", "prometheus-budget.yml");
const TESTS_DIR = join(REPO, "test", "deploy", "rules");
const TEST_FILES = readdirSync(TESTS_DIR).filter((f) => f.endsWith(".test.yml"));

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface RuleFile {
  groups: { name: string; rules: Rule[] }[];
}

const rulesText = readFileSync(RULES, "utf8");
const rules = (parse(rulesText) as RuleFile).groups.flatMap((g) => g.rules);
const alerts = rules.filter((r): r is Rule & { alert: string } => r.alert !== undefined);
const recorded = new Set(
  [...rules, ...(parse(readFileSync(BUDGET, "utf8")) as RuleFile).groups.flatMap((g) => g.rules)]
    .map((r) => r.record)
    .filter((r): r is string => r !== undefined),
);

const scratch = mkdtempSync(join(tmpdir(), "cline-otel-rules-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function promtool(args: string[], cwd = REPO) {
  requireBinary(PROMTOOL_BIN, "prometheus");
  return spawnSync(PROMTOOL_BIN, args, { cwd, encoding: "utf8" });
}

/** The unit tests, run in a fresh dir over `rulesYaml` (annotations stripped) and `budgetYaml`. */
function unitTests(
  name: string,
  rulesYaml: string,
  budgetYaml = readFileSync(BUDGET, "utf8"),
  files: readonly string[] = TEST_FILES,
) {
  const dir = mkdtempSync(join(scratch, `${name}-`));
  const doc = parse(rulesYaml) as RuleFile;
  for (const g of doc.groups) for (const r of g.rules) delete r.annotations;
  writeFileSync(join(dir, "prometheus-rules.yml"), stringify(doc));
  writeFileSync(join(dir, "prometheus-budget.yml"), budgetYaml);
  for (const f of files) copyFileSync(join(TESTS_DIR, f), join(dir, f));
  return promtool(["test", "rules", ...files], dir);
}

describe("otel-collector/prometheus-rules.yml", () => {
  it("passes `promtool check rules` (syntax, PromQL and annotation templates)", () => {
    const r = promtool(["check", "rules", RULES, BUDGET]);
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/SUCCESS: \d+ rules found/);
    const broken = join(scratch, "broken.yml");
    writeFileSync(broken, rulesText.replace("{{ $value | printf", "{{ $value | nosuchfunction"));
    expect(promtool(["check", "rules", broken]).status).not.toBe(0);
  });

  it(
    "passes `promtool test rules`: every alert fires and stays quiet where it should",
    { timeout: 120_000 },
    () => {
      expect(TEST_FILES.length).toBeGreaterThanOrEqual(4);
      const r = unitTests("ok", rulesText);
      expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
      expect(r.stdout.match(/SUCCESS/g)?.length).toBe(TEST_FILES.length);
    },
  );

  it("has unit tests that fire and that stay quiet for every alert", () => {
    const fires = new Set<string>();
    const quiet = new Set<string>();
    for (const f of TEST_FILES) {
      const doc = parse(readFileSync(join(TESTS_DIR, f), "utf8")) as {
        tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
      };
      for (const t of doc.tests)
        for (const a of t.alert_rule_test ?? []) (a.exp_alerts.length > 0 ? fires : quiet).add(a.alertname);
    }
    for (const a of alerts) {
      expect(fires.has(a.alert), `${a.alert} never fires in a test`).toBe(true);
      expect(quiet.has(a.alert), `${a.alert} is never tested quiet`).toBe(true);
    }
  });

  it(
    "is a test that can fail: a higher budget, or counting only increase(), breaks it",
    { timeout: 120_000 },
    () => {
      const budget = readFileSync(BUDGET, "utf8");
      expect(budget).toContain("vector(20)");
      const cost = ["cost.test.yml"];
      expect(
        unitTests("budget", rulesText, budget.replace("vector(20)", "vector(30)"), cost).status,
      ).not.toBe(0);
      // Without the born-in-window branch a new session's first $25 is missed.
      const onlyIncrease = rulesText.replaceAll(
        "and on (job, instance) (cline_otel_collector_passes_total offset 24h)",
        "and on (job, instance) (nothing_matches offset 24h)",
      );
      expect(onlyIncrease).not.toBe(rulesText);
      expect(unitTests("increase", onlyIncrease, budget, cost).status).not.toBe(0);
    },
  );

  it("gives every alert a severity, a summary, and a description saying why and what to do", () => {
    expect(alerts.map((a) => a.alert).sort()).toEqual(
      [
        "ClineCacheHitRatioDropped",
        "ClineDailyCostOverBudget",
        "ClineDailySpendProjectedOverBudget",
        "ClineEditAcceptanceRateFalling",
        "ClineOtelAbsent",
        "ClineOtelExportsFailing",
        "ClineOtelNotCollecting",
        "ClineRunawaySession",
        "ClineTeamDailyCostOverBudget",
        "ClineToolFailureRate",
        "ClineUnpricedRequests",
      ].sort(),
    );
    const docs = readFileSync(join(REPO, "docs", "alerts.md"), "utf8");
    for (const a of alerts) {
      expect(["info", "warning", "critical"], a.alert).toContain(a.labels?.severity);
      expect(a.annotations?.summary?.length ?? 0, a.alert).toBeGreaterThan(20);
      expect(a.annotations?.description, a.alert).toMatch(/Why this threshold: .+What to do: /s);
      expect(a.annotations?.runbook, a.alert).toContain(`docs/alerts.md#${a.alert.toLowerCase()}`);
      expect(docs, `docs/alerts.md has no section for ${a.alert}`).toMatch(
        new RegExp(`^### ${a.alert}$`, "m"),
      );
    }
  });

  it("uses only the contract's metric names, cline-otel's health counters and its own recordings", () => {
    for (const r of rules) {
      for (const m of metricNames(r.expr)) {
        expect(COUNTER_NAMES.has(m) || recorded.has(m), `${r.alert ?? r.record} uses unknown ${m}`).toBe(
          true,
        );
      }
    }
  });

  it("names the health counters exactly as src/export creates them", () => {
    const pipeline = readFileSync(join(REPO, "src", "export", "pipeline.ts"), "utf8");
    const created = [...pipeline.matchAll(/createCounter\("(cline_otel\.[a-z_.]+)"/g)].map((m) => m[1]);
    expect(created.sort()).toEqual(Object.keys(HEALTH_COUNTERS).sort());
    for (const [otel, prom] of Object.entries(HEALTH_COUNTERS)) expect(`${promName(otel)}_total`).toBe(prom);
    const used = new Set(rules.flatMap((r) => metricNames(r.expr)));
    expect(used.has("cline_otel_collector_passes_total")).toBe(true);
    expect(used.has("cline_otel_export_failures_total")).toBe(true);
  });

  it("is loaded by the demo's Prometheus: rule_files beside prometheus.yml, mounted by compose", () => {
    const cfg = parse(readFileSync(join(REPO, "otel-collector", "prometheus.yml"), "utf8")) as {
      rule_files: string[];
    };
    expect(cfg.rule_files).toEqual(["prometheus-rules.yml", "prometheus-budget.yml"]);
    const compose = parse(readFileSync(join(REPO, "docker-compose.yml"), "utf8")) as {
      services: { prometheus: { volumes: string[]; command: string[] } };
    };
    const volumes = compose.services.prometheus.volumes;
    expect(volumes).toContain("./otel-collector/prometheus.yml:/etc/prometheus/prometheus.yml:ro");
    expect(volumes).toContain(
      "./otel-collector/prometheus-rules.yml:/etc/prometheus/prometheus-rules.yml:ro",
    );
    // The budget file can be swapped: CLINE_OTEL_BUDGET_RULES=./my-budget.yml docker compose up -d
    const budgetVolume = ["$", "{CLINE_OTEL_BUDGET_RULES:-./otel-collector/prometheus-budget.yml}"].join("");
    expect(volumes).toContain(`${budgetVolume}:/etc/prometheus/prometheus-budget.yml:ro`);
    expect(compose.services.prometheus.command).toContain("--config.file=/etc/prometheus/prometheus.yml");
  });
});
