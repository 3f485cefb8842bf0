/**
 * Live: the REAL Cline CLI compacts (agentic, twice, with request capture on) while
 * `cline-otel run` watches its data dir and exports to an in-process OTLP receiver. The tokens
 * exported equal what Cline stored (the summarizer's, which Cline stores nowhere, are not among
 * them), `cline.compactions` counts what the daemon observed, and the summarizer's captures are
 * no retries.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { clineAvailable, clineBin } from "../../../../fixtures/harness/run-cline.ts";
import { runScenario, scenarioByName } from "../../../../fixtures/harness/scenarios.ts";
import { applyCacheRule } from "../../../../src/adapter/cline/cache-rule.ts";
import { Ledger } from "../../../../src/ledger/ledger.ts";
import { startDaemon } from "../../../e2e/helpers/cli.ts";
import {
  cumulativeTotals,
  type Receiver,
  startReceiver,
  sumBy,
} from "../../../export/helpers/otlp-receiver.ts";

const available = clineAvailable();
if (!available) {
  const msg = `no Cline binary at ${clineBin()} (run .ci/install-cline.sh): the live compaction test cannot run`;
  if (process.env.CI) throw new Error(msg);
  console.warn(`\n!!! SKIPPING the live compaction test: ${msg}\n`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => T | undefined, ms: number): Promise<T> {
  const t0 = performance.now();
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (performance.now() - t0 > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(50);
  }
}

describe.runIf(available)("live: a compacting Cline session under cline-otel run", () => {
  it("exports the stored tokens exactly, counts the observed compactions, and no summary as a retry", async () => {
    const root = mkdtempSync(join(tmpdir(), "compaction-live-"));
    const dataDir = join(root, "cline-data");
    const stateDir = join(root, "state");
    let rx: Receiver | undefined;
    let daemon: ReturnType<typeof startDaemon> | undefined;
    try {
      rx = await startReceiver();
      const receiver = rx;
      daemon = startDaemon(
        ["run", "--data-dir", dataDir, "--state-dir", stateDir, "--capture-dir", join(root, "captures")],
        {
          OTEL_METRICS_EXPORTER: "otlp",
          OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: rx.url,
          OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "http/protobuf",
          OTEL_METRIC_EXPORT_INTERVAL: "500",
          CLINE_OTEL_LOG_LEVEL: "info",
        },
      );
      const d = daemon;
      await until("the daemon to start", () => (d.log().includes("running:") ? true : undefined), 20_000);
      const out = await runScenario(scenarioByName("compaction-agentic"), root, {
        env: { CLINE_DATA_DIR: dataDir },
      });
      expect(out.unexpected).toEqual([]);
      const stored = out.records.filter((r) => r.route !== "sum");
      const summaries = out.records.filter((r) => r.route === "sum");
      expect(summaries).toHaveLength(2);
      const want: Record<string, number> = { input: 0, output: 0, cache_read: 0, cache_write: 0 };
      for (const r of stored) {
        const c = applyCacheRule(r.expected);
        want.input = (want.input ?? 0) + c.input;
        want.output = (want.output ?? 0) + c.output;
        want.cache_read = (want.cache_read ?? 0) + c.cacheRead;
        want.cache_write = (want.cache_write ?? 0) + c.cacheWrite;
      }
      await until(
        "every stored token exported",
        () => {
          const got = sumBy(cumulativeTotals(receiver.points, "cline.token.usage"), "type");
          return JSON.stringify(got) === JSON.stringify(want) ? true : undefined;
        },
        15_000,
      );
      const observed = await until(
        "a compaction exported",
        () => {
          const n = Object.values(
            sumBy(cumulativeTotals(receiver.points, "cline.compactions"), "cline.agent"),
          );
          const total = n.reduce((a, x) => a + x, 0);
          return total > 0 ? total : undefined;
        },
        15_000,
      );
      daemon.child.kill("SIGTERM");
      const done = await daemon.done;
      expect(done.status, done.stderr).toBe(0);
      const l = Ledger.open(stateDir, { readOnly: true });
      const rows = l.compactionRows();
      const captures = l.captureRows();
      l.close();
      // Observed, so between 1 (both compactions within one read) and 2 (each seen before the next).
      expect(rows.length).toBeGreaterThanOrEqual(1);
      expect(rows.length).toBeLessThanOrEqual(summaries.length);
      const exported = sumBy(
        cumulativeTotals(receiver.points, "cline.compactions"),
        "cline.compaction.strategy",
      );
      expect(exported).toEqual({ agentic: rows.length });
      expect(observed).toBeLessThanOrEqual(rows.length);
      expect(sumBy(cumulativeTotals(receiver.points, "cline.compactions"), "gen_ai.request.model")).toEqual({
        "mock-model": rows.length,
      });
      // The summaries were captured (no session) and are not retries.
      expect(captures.filter((c) => c.sessionId === "")).toHaveLength(2);
      const retries = Object.values(
        sumBy(cumulativeTotals(receiver.points, "cline.request.retries"), "session.id"),
      );
      expect(retries.reduce((a, x) => a + x, 0)).toBe(0);
      console.log(
        `live compaction: ${summaries.length} summarizer calls made, ${rows.length} compaction(s) observed by the daemon`,
      );
    } finally {
      if (daemon && daemon.child.exitCode === null) daemon.child.kill("SIGKILL");
      await rx?.close();
      rmSync(root, { recursive: true, force: true });
    }
  }, 120_000);
});
