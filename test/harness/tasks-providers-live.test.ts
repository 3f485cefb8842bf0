import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkOutcome } from "../../fixtures/harness/ground-truth-tasks.ts";
import { cline2Available, cline2Bin, taskDataDir } from "../../fixtures/harness/run-cline-tasks.ts";
import { PROVIDER_SCENARIOS } from "../../fixtures/harness/scenarios-providers.ts";
import { runTaskScenario } from "../../fixtures/harness/scenarios-tasks.ts";
import { collectTasks, eventComponents, recordComponents } from "./tasks-collect.ts";

/**
 * The per-provider harness against the real Cline CLI 2.18.0 (CI: CLINE_OTEL_CLINE2_BIN), one
 * provider per way of reaching it: litellm (a globalState.json base URL, a usage flavor and a
 * side endpoint), gemini (the mock's Gemini protocol), openai-native (its SDK's environment
 * variable). What the CLI stores must be the handler's reading of the mock's usage, and the task
 * adapter's components the mock's. `npx tsx fixtures/harness/generate-tasks.ts <name>` re-records
 * any of them as a fixture.
 */
const LIVE = ["litellm-cache", "gemini-cache", "openai-native-cache"];

describe("per-provider task-format harness with the real Cline CLI 2.18.0", () => {
  it("stores each provider's usage as its handler reads it; the adapter's components are the mock's", async () => {
    expect(cline2Available(), `no Cline 2.18.0 at ${cline2Bin()}: run .ci/install-cline.sh`).toBe(true);
    const scenarios = PROVIDER_SCENARIOS.filter((s) => LIVE.includes(s.name));
    expect(scenarios.map((s) => s.name)).toEqual(LIVE);
    const roots: string[] = [];
    try {
      // In parallel: each run is mostly the CLI's start-up.
      const outcomes = await Promise.all(
        scenarios.map((s) => {
          const root = mkdtempSync(join(tmpdir(), `cline-tasks-${s.name}-`));
          roots.push(root);
          return runTaskScenario(s, root);
        }),
      );
      for (const out of outcomes) {
        const dataDir = taskDataDir(join(out.workRoot, "home"));
        expect(checkOutcome(out, dataDir), out.scenario.name).toEqual([]);
        expect(out.records.length, out.scenario.name).toBe(2);
        const { events, problems } = await collectTasks(dataDir);
        expect(problems, out.scenario.name).toEqual([]);
        expect(events.map(eventComponents), out.scenario.name).toEqual(out.records.map(recordComponents));
      }
    } finally {
      for (const r of roots) rmSync(r, { recursive: true, force: true });
    }
  }, 300_000);
});
