/**
 * The date-sensitive tests, run again with the clock 60 days ahead (libfaketime): no test may pass
 * only because today is close to its fixtures' dates. The product judges by the clock in two places,
 * the cumulative series TTL (7 days by default: a re-export sends only series with a recent event)
 * and `report`'s default window (the last 30 days); fixtures with fixed dates that relied on either
 * failed a week after they were written (2026-12-07: every run-twice export test). 60 days is past
 * both. Left out are the tests whose clocks faketime cannot move together: those that compare a
 * file's mtime (set by the kernel's clock) with Date.now(), and those whose other side is Go's
 * Prometheus or the Bun-built Cline CLI.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.ts";
import { systemTool } from "../helpers/system-tool.ts";

const FAKETIME = "/usr/bin/faketime";
const available = systemTool(FAKETIME, "faketime", "the tests cannot be run with the clock ahead");

/**
 * What runs ahead: where fixtures meet the TTL and the report's window (exports, e2e runs, report,
 * ledger), and where recorded fixtures keep their recording's dates (acceptance, privacy, read-only),
 * with the prices' catalog (cost) and the docs' examples.
 */
const DIRS = [
  "test/export",
  "test/e2e",
  "test/cli",
  "test/report",
  "test/ledger",
  "test/acceptance",
  "test/privacy",
  "test/readonly",
  "test/cost",
  "test/docs",
];
/** Their clocks cannot all be faked (see above). */
const LEFT_OUT = ["test/export/*promql*", "test/export/prometheus.test.ts", "test/e2e/live.test.ts"];

describe.runIf(available)("the clock 60 days ahead", () => {
  it("the export, e2e, cli, report, ledger, acceptance, privacy, read-only, cost and docs tests still pass", () => {
    // The parent's vitest variables would make the child think it is one of this run's workers.
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("VITEST")) env[k] = v;
    const vitest = join(ROOT, "node_modules", "vitest", "vitest.mjs");
    const r = spawnSync(
      FAKETIME,
      [
        "+60 days",
        process.execPath,
        vitest,
        "run",
        ...DIRS,
        ...LEFT_OUT.flatMap((g) => ["--exclude", g]),
        "--reporter=dot",
        // Two workers: this runs beside the rest of the suite.
        "--maxWorkers=2",
      ],
      { cwd: ROOT, env: { ...env, NODE_ENV: "test", NO_COLOR: "1" }, encoding: "utf8", timeout: 540_000 },
    );
    const out = `${r.stdout}\n${r.stderr}`;
    // The child reports what failed, and under which clock: the dot reporter names each failure.
    expect(r.status, out.slice(-6000)).toBe(0);
    expect(out).toMatch(/Test Files\s+\d+ passed/);
    // The child really ran ahead: a test file of ours prints nothing of the date, so ask the clock.
    const now = spawnSync(FAKETIME, ["+60 days", process.execPath, "-p", "Date.now()"], { encoding: "utf8" });
    expect(Number(now.stdout) - Date.now()).toBeGreaterThan(59 * 86_400_000);
  }, 600_000);
});
