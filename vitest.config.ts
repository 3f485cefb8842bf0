import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";

// Checks whose outcome no Node of ours can change, so .ci/run runs them under one of its two Nodes
// (CLINE_OTEL_RERECORD=once-elsewhere under the other): the re-recordings of Cline's own files with the
// real Cline CLIs (test/harness/*live.test.ts: what Cline writes), and promtool's checks of the alert
// rules (test/deploy/prometheus-rules.test.ts: no code of ours runs); and the date-sensitive tests run a
// second time with the clock 60 days ahead (test/platform/clock-ahead.test.ts: their fixtures' dates against
// the clock, the same under any Node; at today's date they run under both). Our reading of Cline's files
// runs under both: the committed fixtures' tests, and test/e2e/live.test.ts (`cline-otel run` beside a live CLI).
const RERECORDINGS = [
  "test/harness/*live.test.ts",
  "test/deploy/prometheus-rules.test.ts",
  "test/platform/clock-ahead.test.ts",
];
const rerecordElsewhere = process.env.CLINE_OTEL_RERECORD === "once-elsewhere";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: [...configDefaults.exclude, ...(rerecordElsewhere ? RERECORDINGS : [])],
    // Builds dist/ when stale: the tests that spawn the CLI run the bundle (test/helpers/cli.ts).
    globalSetup: ["test/helpers/build-once.ts"],
    // 60 s: with three workers on two cores a CPU-bound test (a 1,200-session ledger exported in delta
    // windows) took 11 s, and 30 s with four: the margin is for a loaded machine, not for slow code.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Vitest's default is one worker fewer than the cores: ONE on CI's 2-core machine, which ran the
    // files one after another (832 s for Node 22, 2026-12-04). Most of the slow files wait on child
    // processes (the real Cline CLIs, Prometheus, OTLP receivers, killed daemons), so three workers on
    // two cores keep both busy: Node 24's files 612 s with two, 486 s with three; four timed a test out
    // (docs/performance.md "CI time"). A number: vitest caps a percentage at 100 %. The ratio checks
    // (test/bench/) interleave their two sides, so a neighbour's load falls on both.
    maxWorkers: Math.max(1, Math.round(availableParallelism() * 1.5)),
  },
});
