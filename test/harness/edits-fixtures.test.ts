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
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type LoadedGroundTruth,
  loadGroundTruth,
  messageDocuments,
} from "../../fixtures/harness/ground-truth.ts";
import { collectDocument } from "../../src/adapter/cline/document.ts";
import type { EditRecord, ToolResult } from "../../src/adapter/types.ts";

interface Read {
  readonly gt: LoadedGroundTruth;
  readonly edits: EditRecord[];
  readonly results: ToolResult[];
  /** toolUseId -> the files its input names, in order (an oracle read with JSON.parse). */
  readonly files: Map<string, string[]>;
}

/** The files of a tool_use input: editor's `path`, or the headers of an apply_patch text, in order. */
function filesOf(name: string, input: Record<string, unknown>): string[] {
  if (name === "editor") return [String(input.path)];
  const out: string[] = [];
  for (const line of String(input.input).split("\n")) {
    const m = /^\*\*\* (?:Add|Update|Delete) File: (.*)$/.exec(line);
    if (m) out.push(m[1] as string);
    const moved = /^\*\*\* Move to: (.*)$/.exec(line);
    if (moved) out[out.length - 1] = moved[1] as string;
  }
  return out;
}

async function read(name: string): Promise<Read> {
  const gt = loadGroundTruth(name);
  const docs = messageDocuments(join(gt.fixtureRoot, gt.layout.sessionsDir));
  const edits: EditRecord[] = [];
  const results: ToolResult[] = [];
  const files = new Map<string, string[]>();
  for (const path of docs) {
    const obs = await collectDocument({ adapterId: "cline", path, origin: "walk", hint: {} });
    if (obs.status !== "read") throw new Error(`${path}: ${obs.status}`);
    edits.push(...(obs.edits ?? []));
    results.push(...(obs.signals?.toolResults ?? []));
    const doc = JSON.parse(readFileSync(path, "utf8")) as {
      messages: {
        content: { type: string; id?: string; name?: string; input?: Record<string, unknown> }[];
      }[];
    };
    for (const m of doc.messages)
      for (const b of Array.isArray(m.content) ? m.content : [])
        if (b.type === "tool_use" && (b.name === "editor" || b.name === "apply_patch"))
          files.set(b.id ?? "", filesOf(b.name, b.input ?? {}));
  }
  return { gt, edits, results, files };
}

const toolUseIdOf = (e: EditRecord) => e.callKey.slice(e.callKey.lastIndexOf("|") + 1);
const fileOf = (r: Read, e: EditRecord) =>
  r.files.get(toolUseIdOf(e))?.[Number(e.editKey.slice(e.editKey.lastIndexOf("|") + 1))];

function checkAgainstGit(r: Read): void {
  const git = new Map((r.gt.gitNumstat ?? []).map((f) => [f.path, f]));
  const accepted = r.edits.filter((e) => e.decision === "accepted");
  const byFile = new Map<string, { added: number; removed: number; exact: boolean }>();
  for (const e of accepted) {
    const f = fileOf(r, e);
    expect(f, e.editKey).toBeDefined();
    const cur = byFile.get(f as string) ?? { added: 0, removed: 0, exact: true };
    byFile.set(f as string, {
      added: cur.added + e.linesAdded,
      removed: cur.removed + e.linesRemoved,
      exact: cur.exact && e.exact,
    });
  }
  // Every file git saw changed was changed by an accepted edit, and no other.
  expect([...byFile.keys()].sort()).toEqual([...git.keys()].sort());
  for (const [path, ours] of byFile) {
    const theirs = git.get(path);
    if (ours.exact)
      expect({ path, ...ours }).toEqual({
        path,
        added: theirs?.added,
        removed: theirs?.removed,
        exact: true,
      });
    else {
      expect(ours.added, path).toBeLessThanOrEqual(theirs?.added ?? 0);
      expect(ours.removed, path).toBeLessThanOrEqual(theirs?.removed ?? 0);
    }
  }
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
