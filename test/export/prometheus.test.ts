/**
 * The Prometheus exporter scraped by a real Prometheus (Debian's 2.42: `apt-get install -y
 * prometheus`): a PromQL `sum by (type)` over what it stored equals the ledger.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/config/config.ts";
import { ExportPipeline } from "../../src/export/pipeline.ts";
import { buildPriceLookup } from "../../src/export/price-lookup.ts";
import { silentLogger } from "../../src/util/log.ts";
import { RECENT_MS } from "../helpers/recent.ts";
import { systemTool } from "../helpers/system-tool.ts";
import { fillLedger, type TempLedger, tempLedger } from "./helpers/ledger.ts";

const PROMETHEUS = "/usr/bin/prometheus";
const available = systemTool(PROMETHEUS, "prometheus", "the Prometheus scrape test cannot run");

/** The exact names the SDK's serializer produces (sanitized, `_total` for monotonic sums, no unit suffix). */
const PROM_NAMES = [
  "cline_token_usage_total",
  "cline_requests_total",
  "cline_tool_calls_total",
  "cline_tool_token_usage_total",
  "cline_cost_usage_total",
  "cline_tool_cost_usage_total",
  "cline_requests_unpriced_total",
];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
}

describe.runIf(available)("Prometheus exporter scraped by a real Prometheus", () => {
  let t: TempLedger;
  let pipeline: ExportPipeline;
  let prom: ChildProcess | undefined;
  let promUrl: string;
  let work: string;

  beforeAll(async () => {
    t = tempLedger();
    // Every scrape after the first serves only live series: recent events (RECENT_MS).
    fillLedger(t.ledger, { sessions: 30, timestampMs: RECENT_MS });
    const cfg = resolveConfig(
      { stateDir: "/tmp/unused-state", sessionsDir: "/tmp/unused-s", dbDir: "/tmp/unused-d" },
      {
        OTEL_METRICS_EXPORTER: "prometheus",
        OTEL_EXPORTER_PROMETHEUS_PORT: "0",
        CLINE_OTEL_USER: "",
        // Series by session: the queries below compare them with the ledger's rows.
        OTEL_METRICS_INCLUDE_SESSION_ID: "true",
      },
      "/tmp",
      "/tmp",
    );
    pipeline = await ExportPipeline.start(cfg.export, t.ledger, {
      logger: silentLogger,
      priceOf: buildPriceLookup(undefined),
      serviceVersion: "1.0.0",
    });
    const target = new URL(pipeline.prometheusUrl ?? "").host;
    work = mkdtempSync(join(tmpdir(), "prom-"));
    writeFileSync(
      join(work, "prometheus.yml"),
      `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: cline-otel\n    static_configs:\n      - targets: ["${target}"]\n`,
    );
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    prom = spawn(
      PROMETHEUS,
      [
        `--config.file=${join(work, "prometheus.yml")}`,
        `--storage.tsdb.path=${join(work, "data")}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: "ignore" },
    );
  }, 60_000);

  afterAll(async () => {
    if (prom && prom.exitCode === null) {
      const exited = new Promise((r) => prom?.once("exit", r));
      prom.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (prom.exitCode === null) prom.kill("SIGKILL");
    }
    await pipeline?.shutdown();
    t?.dispose();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("serves the contract's metric names", async () => {
    const text = await (await fetch(pipeline.prometheusUrl ?? "")).text();
    for (const name of PROM_NAMES) expect(text).toContain(`# TYPE ${name} counter`);
    expect(text).toMatch(
      /cline_token_usage_total\{cline_otel_producer="cline-otel",session_id="[^"]+",cline_agent="[^"]+",cline_project="[^"]+",gen_ai_request_model="[^"]+",gen_ai_provider_name="[^"]+",type="input",otel_scope_name="cline-otel"\} \d+/,
    );
  });

  it("sum by (type) (cline_token_usage_total) equals the ledger", async () => {
    const rows = t.ledger.usageSeries();
    const want = {
      input: rows.reduce((x, r) => x + r.input, 0),
      output: rows.reduce((x, r) => x + r.output, 0),
      cache_read: rows.reduce((x, r) => x + r.cacheRead, 0),
      cache_write: rows.reduce((x, r) => x + r.cacheWrite, 0),
    };
    const got = await waitFor("Prometheus to scrape cline-otel", async () => {
      const q = encodeURIComponent("sum by (type) (cline_token_usage_total)");
      const r = (await (await fetch(`${promUrl}/api/v1/query?query=${q}`)).json()) as {
        data: { result: { metric: { type: string }; value: [number, string] }[] };
      };
      if (r.data.result.length < 4) return undefined;
      return Object.fromEntries(r.data.result.map((s) => [s.metric.type, Number(s.value[1])]));
    });
    expect(got).toEqual(want);
    const names = await waitFor("all metric names", async () => {
      const r = (await (await fetch(`${promUrl}/api/v1/label/__name__/values`)).json()) as { data: string[] };
      return PROM_NAMES.every((n) => r.data.includes(n)) ? r.data : undefined;
    });
    for (const n of PROM_NAMES) expect(names).toContain(n);
    const q = encodeURIComponent("sum(cline_requests_total)");
    const r = (await (await fetch(`${promUrl}/api/v1/query?query=${q}`)).json()) as {
      data: { result: { value: [number, string] }[] };
    };
    expect(Number(r.data.result[0]?.value[1])).toBe(t.ledger.counts().events);
    // A served scrape counts as delivered (the series TTL relies on it).
    expect(t.ledger.getExportState("prometheus").lastSuccessMs).toBeGreaterThan(0);
  }, 60_000);
});
