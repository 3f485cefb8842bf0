/**
 * The edit scenarios re-recorded with the real Cline CLI 3.0.65 (CI runs it, as live.test.ts):
 * `edits-tui` answers approvals in the TUI through a pseudo-terminal, `edits-patch` runs apply_patch
 * and a non-interactive refusal. What the CLI wrote, read through the adapter, must agree with git's
 * `git diff --numstat` of the workspace and with every stored result's outcome (a JSON.parse
 * oracle), whatever ids and times this run produced. Needs `.ci/install-cline.sh`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { messageDocuments, storedToolOutcomes } from "../../fixtures/harness/ground-truth.ts";
import { clineAvailable, clineBin, processRunning } from "../../fixtures/harness/run-cline.ts";
import { runScenario, scenarioByName } from "../../fixtures/harness/scenarios.ts";
import { checkAgainstGit, readEdits } from "./edits-check.ts";

describe.each(["edits-tui", "edits-patch"])("%s, re-recorded with the real CLI", (name) => {
  it("outcomes as stored, accepted edits equal to git's numstat, rejected and failed edits present", async () => {
    expect(clineAvailable(), `no Cline binary at ${clineBin()}: run .ci/install-cline.sh`).toBe(true);
    const root = mkdtempSync(join(tmpdir(), `cline-${name}-live-`));
    try {
      const dataDir = join(root, "cline-data");
      const out = await runScenario(scenarioByName(name), root, { env: { CLINE_DATA_DIR: dataDir } });
      expect(out.unexpected).toEqual([]);
      for (const pid of out.steps.flatMap((s) => s.result.hubPids)) expect(processRunning(pid)).toBe(false);
      const docs = messageDocuments(join(dataDir, "sessions"));
      const toolOutcomes = Object.fromEntries(storedToolOutcomes(docs));
      const r = await readEdits(docs, { gitNumstat: out.gitNumstat ?? [], toolOutcomes });
      expect(Object.fromEntries(r.results.map((x) => [x.toolUseId, x.outcome]))).toEqual(toolOutcomes);
      expect(new Set(Object.values(toolOutcomes))).toEqual(new Set(["success", "failure", "rejected"]));
      checkAgainstGit(r);
      expect(new Set(r.edits.map((e) => e.decision))).toEqual(new Set(["accepted", "rejected", "failed"]));
      if (name === "edits-tui") expect(out.gitCommits).toBe(1);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 300_000);
});
