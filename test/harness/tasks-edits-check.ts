/**
 * What the task adapter must read of an edit scenario (fixtures/harness/scenarios-edits.ts),
 * checked against the run's own truth: the calls the script made and how each ended, and
 * `git diff --numstat` of the workspace (docs/cline-format.md §16). Shared by the committed
 * fixtures' test and the live re-recording.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import type { NumstatEntry } from "../../fixtures/harness/git-workspace.ts";
import type { ExpectedCall } from "../../fixtures/harness/scenarios-tasks.ts";
import type { Collected } from "./tasks-collect.ts";

/** The path of each tool message by its `ts` (plain JSON.parse: the test's own reading). */
function pathsByTs(dataDir: string): Map<number, string> {
  const out = new Map<number, string>();
  const tasks = join(dataDir, "tasks");
  for (const id of readdirSync(tasks)) {
    const doc = JSON.parse(readFileSync(join(tasks, id, "ui_messages.json"), "utf8")) as {
      ts: number;
      say?: string;
      ask?: string;
      text?: string;
    }[];
    for (const m of doc) {
      if (m.say === "diff_error") out.set(m.ts, m.text ?? "");
      else if (m.say === "tool" || m.ask === "tool") {
        const body = JSON.parse(m.text ?? "{}") as { path?: string };
        if (typeof body.path === "string") out.set(m.ts, body.path);
      }
    }
  }
  return out;
}

export function checkEditScenario(
  c: Collected,
  dataDir: string,
  truth: { readonly calls: readonly ExpectedCall[]; readonly numstat: readonly NumstatEntry[] },
): void {
  expect(c.problems).toEqual([]);
  // Every call the model made is counted once, with its outcome, and carries its request's tokens.
  expect(c.toolCalls.map((t) => t.toolName)).toEqual(truth.calls.map((x) => x.tool));
  const outcome = new Map(c.toolResults.map((r) => [r.callKey, r.outcome]));
  expect(c.toolCalls.map((t) => outcome.get(t.callKey))).toEqual(truth.calls.map((x) => x.outcome));
  for (const t of c.toolCalls) expect(t.usageKey).not.toBe("");
  const events = new Set(c.events.map((e) => e.dedupKey));
  for (const t of c.toolCalls) expect(events.has(t.usageKey)).toBe(true);

  // One record per edit call; a failed one counts no lines.
  const editCalls = c.toolCalls.filter((t) =>
    /^(newFileCreated|editedExistingFile|fileDeleted)$/.test(t.toolName),
  );
  expect(c.edits.map((e) => e.callKey).sort()).toEqual(editCalls.map((t) => t.callKey).sort());
  const decision = { success: "accepted", rejected: "rejected", failure: "failed" } as const;
  for (const e of c.edits) {
    const o = outcome.get(e.callKey);
    expect(e.decision).toBe(o === undefined || o === "unknown" ? undefined : decision[o]);
    if (e.decision === "failed") expect([e.linesAdded, e.linesRemoved]).toEqual([0, 0]);
  }

  // Accepted edits per file against git: equal where exact; a whole-file rewrite (inexact)
  // counts every line it wrote as added (>= git's) and none removed (<= git's).
  const paths = pathsByTs(dataDir);
  const byPath = new Map<string, { added: number; removed: number; exact: boolean }>();
  for (const e of c.edits.filter((x) => x.decision === "accepted")) {
    const p = paths.get(e.timestampMs) ?? "?";
    const s = byPath.get(p) ?? { added: 0, removed: 0, exact: true };
    byPath.set(p, {
      added: s.added + e.linesAdded,
      removed: s.removed + e.linesRemoved,
      exact: s.exact && e.exact,
    });
  }
  expect([...byPath.keys()].sort()).toEqual(truth.numstat.map((n) => n.path).sort());
  for (const n of truth.numstat) {
    const ours = byPath.get(n.path);
    if (ours === undefined) continue;
    if (ours.exact) expect({ path: n.path, ...ours }).toEqual({ ...n, exact: true });
    else {
      expect(ours.added, `${n.path} added`).toBeGreaterThanOrEqual(n.added);
      expect(ours.removed, `${n.path} removed`).toBeLessThanOrEqual(n.removed);
    }
  }
}
