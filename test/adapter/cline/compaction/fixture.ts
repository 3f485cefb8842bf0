import { cpSync, rmSync } from "node:fs";
import { join } from "node:path";
import { loadGroundTruth } from "../../../../fixtures/harness/ground-truth.ts";

/**
 * A compaction fixture's tree at `<root>/home` (replacing what was there): its final state, or
 * the copy the harness kept from before the first compaction. Returns the home.
 */
export function placeCompactionFixture(scenario: string, which: "before" | "final", root: string): string {
  const gt = loadGroundTruth(scenario);
  const src =
    which === "before"
      ? join(gt.fixtureRoot, gt.before?.dir ?? "before", "home")
      : join(gt.fixtureRoot, "home");
  rmSync(join(root, "home"), { recursive: true, force: true });
  cpSync(src, join(root, "home"), { recursive: true });
  return join(root, "home");
}
