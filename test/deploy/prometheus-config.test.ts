import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { REPO } from "./support/dashboard.ts";
import { PROMTOOL_BIN, requireBinary } from "./support/prometheus.ts";

const CONFIG = join(REPO, "otel-collector", "prometheus.yml");

function promtool(path: string) {
  requireBinary(PROMTOOL_BIN, "prometheus");
  return spawnSync(PROMTOOL_BIN, ["check", "config", path], { encoding: "utf8" });
}

/** An unchanged copy of the config in `dir`. */
function copyOf(dir: string): string {
  const path = join(dir, "intact.yml");
  writeFileSync(path, readFileSync(CONFIG, "utf8"));
  return path;
}

describe("otel-collector/prometheus.yml", () => {
  it("passes `promtool check config`", () => {
    const r = promtool(CONFIG);
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain("SUCCESS");
    // It follows rule_files and checks the alert rules and the budget too.
    expect(r.stdout).toContain("SUCCESS: 2 rule files found");
  });

  it("is a check that can fail (promtool rejects a broken copy)", () => {
    const dir = mkdtempSync(join(tmpdir(), "cline-otel-promtool-"));
    try {
      const broken = join(dir, "prometheus.yml");
      // The rule files beside it, so that only the broken value can fail the check.
      for (const f of ["prometheus-rules.yml", "prometheus-budget.yml"])
        copyFileSync(join(REPO, "otel-collector", f), join(dir, f));
      expect(promtool(copyOf(dir)).status).toBe(0);
      writeFileSync(
        broken,
        readFileSync(CONFIG, "utf8").replace("scrape_interval: 15s", "scrape_interval: fifteen"),
      );
      expect(promtool(broken).status).not.toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("scrapes the collector's prometheus exporter and keeps the labels it derives from each resource", () => {
    const cfg = parse(readFileSync(CONFIG, "utf8")) as {
      global: { scrape_interval: string };
      scrape_configs: { job_name: string; honor_labels?: boolean; static_configs: { targets: string[] }[] }[];
    };
    const job = cfg.scrape_configs.find((j) => j.job_name === "otel-collector");
    expect(job?.static_configs[0]?.targets).toEqual(["otel-collector:8889"]);
    expect(job?.honor_labels).toBe(true);
    // Grafana's $__rate_interval is derived from the datasource's timeInterval: keep them equal.
    const ds = parse(
      readFileSync(join(REPO, "otel-collector/grafana/provisioning/datasources/prometheus.yaml"), "utf8"),
    ) as {
      datasources: { jsonData: { timeInterval: string } }[];
    };
    expect(ds.datasources[0]?.jsonData.timeInterval).toBe(cfg.global.scrape_interval);
  });
});
