import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compareMetrics, messageDocuments, storedMetrics } from "../../fixtures/harness/ground-truth.ts";
import { clineAvailable, clineBin, processRunning } from "../../fixtures/harness/run-cline.ts";
import { runScenario, scenarioByName } from "../../fixtures/harness/scenarios.ts";

/**
 * The harness against the real CLI in the shape the live end-to-end test uses it: a fresh
 * CLINE_DATA_DIR, one non-interactive run and one TUI resume. Needs `.ci/install-cline.sh`.
 */
describe("harness with the real Cline CLI", () => {
  it("runs a session plus a resume into a fresh CLINE_DATA_DIR and stores exactly the mock's usage", async () => {
    expect(clineAvailable(), `no Cline binary at ${clineBin()}: run .ci/install-cline.sh`).toBe(true);
    const root = mkdtempSync(join(tmpdir(), "cline-harness-live-"));
    try {
      const dataDir = join(root, "cline-data");
      const out = await runScenario(scenarioByName("resumed"), root, { env: { CLINE_DATA_DIR: dataDir } });
      expect(out.unexpected).toEqual([]);
      expect(out.steps.map((s) => s.result.exitCode)).toEqual([0, 0]);
      const first = out.steps[0]?.result;
      expect(first?.paths.sessionsDir).toBe(join(dataDir, "sessions"));
      expect(out.steps[1]?.result.sessionIds).toEqual(first?.sessionIds);
      // The TUI resume starts a hub; the harness must have stopped it (init reaps the zombie later).
      expect(out.steps[1]?.result.hubPids.length).toBeGreaterThan(0);
      for (const pid of out.steps.flatMap((s) => s.result.hubPids)) {
        expect(processRunning(pid)).toBe(false);
      }
      const stored = storedMetrics(messageDocuments(join(dataDir, "sessions")));
      expect(stored).toHaveLength(5);
      expect(compareMetrics(out.records, stored)).toEqual([]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 180_000);
});
