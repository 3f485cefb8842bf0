import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkOutcome } from "../../fixtures/harness/ground-truth-tasks.ts";
import { cline2Available, cline2Bin, taskDataDir } from "../../fixtures/harness/run-cline-tasks.ts";
import { EDIT_SCENARIOS } from "../../fixtures/harness/scenarios-edits.ts";
import { runTaskScenario } from "../../fixtures/harness/scenarios-tasks.ts";
import { collectTasks } from "./tasks-collect.ts";
import { checkEditScenario } from "./tasks-edits-check.ts";

/**
 * The edit scenarios re-recorded with the real Cline CLI 2.18.0 (`.ci/install-cline.sh`; CI
 * exports CLINE_OTEL_CLINE2_BIN), in git workspaces: `approvals` runs without `-y` in a
 * pseudo-terminal whose prompts the harness answers (fixtures/harness/pty-approvals.ts). Each
 * run's files are checked against the mock, then read by the task adapter and checked against
 * the scenario's calls and `git diff --numstat` of its workspace (docs/cline-format.md §16).
 */
describe("edit scenarios with the real Cline CLI 2.18.0", () => {
  it("approvals (pty), diff-error and edits: every call with its outcome, accepted lines as git counts them", async () => {
    expect(cline2Available(), `no Cline 2.18.0 at ${cline2Bin()}: run .ci/install-cline.sh`).toBe(true);
    const root = mkdtempSync(join(tmpdir(), "cline-tasks-edits-"));
    try {
      // In parallel: each run is mostly the CLI's start-up, auth and exit.
      const runs = await Promise.all(
        EDIT_SCENARIOS.map((s) => runTaskScenario(s, join(root, s.name)).then((out) => ({ s, out }))),
      );
      for (const { s, out } of runs) {
        const dataDir = taskDataDir(join(out.workRoot, "home"));
        expect(checkOutcome(out, dataDir), s.name).toEqual([]);
        expect(out.git?.numstat.length, s.name).toBeGreaterThan(0);
        if (s.approvals)
          expect(out.runs[0]?.result.answered?.filter((a) => a.ask !== "completion_result").length).toBe(
            s.approvals.length,
          );
        checkEditScenario(await collectTasks(dataDir), dataDir, {
          calls: s.expectCalls ?? [],
          numstat: out.git?.numstat ?? [],
        });
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 400_000);
});
