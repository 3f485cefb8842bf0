/**
 * The real-CLI edit fixtures (cline@3.0.65, workspaces that are git repositories; docs/cline-format.md
 * §16): `edits-tui` (approvals answered by hand in the TUI through a pseudo-terminal: accepted
 * create, replace and insert, a denied replace, a failed replace, an approved `git commit`) and
 * `edits-patch` (apply_patch for a `gpt` model id: add + update + delete, a patch that does not
 * apply, a non-interactive `--auto-approve false` refusal). Read through the adapter: every tool
 * result's outcome is the one ground truth recorded, and the accepted EditRecords of each file sum
 * to `git diff --numstat` of the workspace before vs after (exact where marked exact; an inexact
 * record never claims more than git saw).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadGroundTruth, messageDocuments } from "../../fixtures/harness/ground-truth.ts";
import { checkAgainstGit, fileOf, readEdits } from "./edits-check.ts";

async function read(name: string) {
  const gt = loadGroundTruth(name);
  return { gt, ...(await readEdits(messageDocuments(join(gt.fixtureRoot, gt.layout.sessionsDir)), gt)) };
}

describe("edits-tui: approvals by hand in the TUI, a git workspace", async () => {
  const r = await read("edits-tui");

  it("every tool result's outcome is ground truth's (rejected for the denial, failure for the text not found)", () => {
    expect(Object.fromEntries(r.results.map((x) => [x.toolUseId, x.outcome]))).toEqual(r.gt.toolOutcomes);
    expect(Object.values(r.gt.toolOutcomes ?? {}).sort()).toEqual([
      "failure",
      "rejected",
      "success",
      "success",
      "success",
      "success",
    ]);
  });

  it("accepted edits per file equal git diff --numstat before vs after (the agent's commit included)", () => {
    expect(r.gt.gitCommits).toBe(1);
    checkAgainstGit(r);
  });

  it("one record per edit call: decisions, operations, languages; source unknown (an approval is stored as an auto-approval)", () => {
    const rows = r.edits
      .map((e) => [
        fileOf(r, e),
        e.operation,
        e.decision,
        e.language,
        e.linesAdded,
        e.linesRemoved,
        e.exact,
        e.source,
      ])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])) || String(a[2]).localeCompare(String(b[2])));
    expect(rows).toEqual([
      ["notes.md", "modify", "accepted", "markdown", 2, 1, true, "unknown"],
      ["notes.md", "modify", "accepted", "markdown", 1, 0, true, "unknown"],
      ["src/app.py", "modify", "rejected", "python", 2, 1, true, "unknown"],
      ["src/greet.ts", "create", "accepted", "typescript", 3, 0, true, "unknown"],
      ["src/util.ts", "modify", "failed", "typescript", 0, 0, true, "unknown"],
    ]);
  });
});

describe("edits-patch: apply_patch, a patch that does not apply, a non-interactive refusal", async () => {
  const r = await read("edits-patch");

  it("every tool result's outcome is ground truth's", () => {
    expect(Object.fromEntries(r.results.map((x) => [x.toolUseId, x.outcome]))).toEqual(r.gt.toolOutcomes);
    expect(Object.values(r.gt.toolOutcomes ?? {}).sort()).toEqual(["failure", "rejected", "success"]);
  });

  it("accepted patch files equal git's numstat where exact; a Delete File is inexact and claims no lines", () => {
    checkAgainstGit(r);
    const deleted = r.edits.filter((e) => e.operation === "delete");
    expect(deleted.map((e) => [fileOf(r, e), e.decision, e.linesRemoved, e.exact])).toEqual([
      ["old.txt", "accepted", 0, false],
    ]);
  });

  it("one record per patch file; the failed patch counts no lines; the refused Add File is rejected with its lines", () => {
    const rows = r.edits
      .map((e) => [fileOf(r, e), e.operation, e.decision, e.linesAdded, e.linesRemoved])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    expect(rows).toEqual([
      ["docs/guide.md", "create", "accepted", 3, 0],
      ["notes.md", "modify", "failed", 0, 0],
      ["old.txt", "delete", "accepted", 0, 0],
      ["refused.txt", "create", "rejected", 1, 0],
      ["src/util.ts", "modify", "accepted", 2, 1],
    ]);
  });
});
