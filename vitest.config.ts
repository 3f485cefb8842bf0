import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Builds dist/ when stale: the tests that spawn the CLI run the bundle (test/helpers/cli.ts).
    globalSetup: ["test/helpers/build-once.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Vitest's default is one worker fewer than the cores: ONE on CI's 2-core machine, which ran the
    // files one after another (832 s for Node 22, 2026-12-04). Most of the slow files wait on child
    // processes (the real Cline CLIs, Prometheus, OTLP receivers, killed daemons), so one worker per core
    // keeps both cores busy. The ratio checks (test/bench/) interleave their two sides, so a neighbour's
    // load falls on both.
    maxWorkers: "100%",
  },
});
