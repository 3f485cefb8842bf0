/**
 * Reading the edit scenarios' documents through the adapter, and checking them against git's own
 * count of the workspace (shared by the fixture test and the live re-recording test).
 */
import { readFileSync } from "node:fs";
import { expect } from "vitest";
import type { FileNumstat } from "../../fixtures/harness/git-workspace.ts";
import type { StoredOutcome } from "../../fixtures/harness/ground-truth.ts";
import { collectDocument } from "../../src/adapter/cline/document.ts";
import type { EditRecord, ToolResult } from "../../src/adapter/types.ts";

export interface Read {
  readonly truth: {
    readonly gitNumstat?: readonly FileNumstat[];
    readonly toolOutcomes?: Readonly<Record<string, StoredOutcome>>;
  };
  readonly edits: EditRecord[];
  readonly results: ToolResult[];
  /** toolUseId -> the files its input names, in order (an oracle read with JSON.parse). */
  readonly files: Map<string, string[]>;
}

/** The files of a tool_use input: editor's `path`, or the headers of an apply_patch text, in order. */
export function filesOf(name: string, input: Record<string, unknown>): string[] {
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

export async function readEdits(docs: readonly string[], truth: Read["truth"]): Promise<Read> {
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
  return { truth, edits, results, files };
}

const toolUseIdOf = (e: EditRecord) => e.callKey.slice(e.callKey.lastIndexOf("|") + 1);
export const fileOf = (r: Read, e: EditRecord) =>
  r.files.get(toolUseIdOf(e))?.[Number(e.editKey.slice(e.editKey.lastIndexOf("|") + 1))];

export function checkAgainstGit(r: Read): void {
  const git = new Map((r.truth.gitNumstat ?? []).map((f) => [f.path, f]));
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
