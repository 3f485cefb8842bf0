/**
 * The committed edit fixtures of the real Cline CLI 2.18.0 (fixtures/cline-tasks/{approvals,
 * diff-error,edits}; docs/cline-format.md §16) read by the task adapter: every call counted with
 * its outcome, and the accepted edits' lines against `git diff --numstat` of the workspace.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadTaskGroundTruth } from "../../fixtures/harness/ground-truth-tasks.ts";
import { collectTasks } from "./tasks-collect.ts";
import { checkEditScenario } from "./tasks-edits-check.ts";

describe.each(["approvals", "diff-error", "edits"])("edit fixture %s", (name) => {
  it("counts every call with its outcome, and the accepted edits' lines as git does", async () => {
    const gt = loadTaskGroundTruth(name);
    expect(gt.git?.numstat.length).toBeGreaterThan(0);
    const dataDir = join(gt.fixtureRoot, gt.dataDir);
    checkEditScenario(await collectTasks(dataDir), dataDir, {
      calls: gt.calls ?? [],
      numstat: gt.git?.numstat ?? [],
    });
  });
});

describe("what the edit fixtures hold", () => {
  it("approvals: asked by hand (3 calls: rejected, success, success) and the commit made", () => {
    const gt = loadTaskGroundTruth("approvals");
    expect(gt.approvals).toEqual(["deny", "approve", "approve"]);
    expect(gt.calls?.map((c) => c.outcome)).toEqual(["rejected", "success", "success"]);
    expect(gt.git?.commits).toEqual(["Add summary"]);
  });

  it("diff-error: 6 calls, one failed replace", () => {
    const gt = loadTaskGroundTruth("diff-error");
    expect(gt.calls).toHaveLength(6);
    expect(gt.calls?.filter((c) => c.outcome === "failure")).toHaveLength(1);
  });
});
