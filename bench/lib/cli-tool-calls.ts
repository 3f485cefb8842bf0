/**
 * The editing and command calls of the CLI 3.x benchmark corpus (bench/lib/corpus.ts), shaped as
 * `cline@3.0.65` stores them (docs/cline-format.md §16, fixtures/cline/edits-tui, edits-patch, commit):
 * `editor` with `path` + `new_text` (a create), `path` + `old_text` + `new_text` (a replacement) or
 * `path` + `insert_line` + `new_text` (an insert); `apply_patch` (`input`: a Codex patch) for a model
 * id containing `gpt`; `run_commands` with `commands`, some of them `git commit`. Their results: a
 * JSON string for the editor and apply_patch (`success`, or `success:false` + `error` for a failed
 * edit), an array of `{query, result, success}` for commands, and a denial (`is_error: true`) now and
 * then. Deterministic for a given `rand`.
 */
import { bodyText, logNormal, type Rand } from "./corpus.ts";
import { type EditPair, editPair, patchText } from "./edit-shapes.ts";

/** What becomes of a call: applied, denied by the user (`is_error`), or failed (`success: false`). */
export type CallFate = "applied" | "denied" | "failed";

/** A tool_use's input with `MARK` strings where its `bodies` go (in order), and what its result needs. */
export interface PlannedCall {
  readonly name: string;
  readonly input: Record<string, unknown>;
  readonly bodies: string[];
  readonly fate: CallFate;
  /** The result's JSON string (editor, apply_patch, a denial) or array (run_commands). */
  readonly result: string | readonly Record<string, unknown>[];
  /** The bodies of the `MARK` strings in `result`, in order. */
  readonly resultBodies: string[];
  readonly kind: "create" | "replace" | "insert" | "patch" | "commit" | "other";
}

const EXTENSIONS = ["ts", "ts", "ts", "py", "md", "json", "go", "tsx"] as const;
const CWD = "/home/dev/src/project";
const DENIAL =
  "This tool call was rejected by the user and not executed. -- NOT a tool or system failure. Clarify with user before proceeding.";

/** Shares of the fates: a few denials (the TUI's `n`) and failed edits (text not found). */
function fateOf(rand: Rand, canFail: boolean): CallFate {
  const r = rand();
  if (r < 0.08) return "denied";
  if (canFail && r < 0.12) return "failed";
  return "applied";
}

/** Lines cut from the reservoir: about `chars` characters of it, whole lines. */
function linesOf(res: string, rand: Rand, chars: number): string[] {
  return bodyText(res, rand, chars).split("\n");
}

/** The editor's result "Edited <path>" with its fenced diff (`-n: line` / `+n: line`). */
function editedResult(abs: string, pair: EditPair): string {
  const diff: string[] = [];
  let n = 1;
  for (const h of pair.hunk) {
    if (h[0] !== " ") diff.push(`${h[0]}${n}: ${h.slice(1)}`);
    if (h[0] !== "-") n++;
  }
  return `Edited ${abs}\n\`\`\`diff\n${diff.join("\n")}\n\`\`\``;
}

/**
 * One editing call of a turn: `apply_patch` for a gpt model, else `editor` (35 % creates, 50 %
 * replacements, 15 % inserts). Texts: creates of ~1.5 KB median, replacements of ~600 B.
 */
export function editCall(res: string, rand: Rand, model: string, turn: number, MARK: string): PlannedCall {
  const ext = EXTENSIONS[Math.floor(rand() * EXTENSIONS.length)] as string;
  const path = `src/mod_${turn % 37}/file_${turn}.${ext}`;
  const abs = `${CWD}/${path}`;
  const pick = (): string => bodyText(res, rand, 40).split("\n")[0] as string;
  if (model.includes("gpt")) {
    const pair = editPair(linesOf(res, rand, logNormal(rand, 600, 0.8, 40, 20_000)), rand, pick);
    const added =
      rand() < 0.2
        ? {
            path: `src/new_${turn}.${ext}`,
            lines: linesOf(res, rand, logNormal(rand, 1200, 0.8, 40, 40_000)),
          }
        : undefined;
    const fate = fateOf(rand, true);
    const files = added === undefined ? path : `${added.path}\n${path}`;
    return {
      name: "apply_patch",
      input: { input: MARK },
      bodies: [patchText(path, pair, added)],
      fate,
      kind: "patch",
      resultBodies: [],
      result: editorResultJson(
        "apply_patch",
        fate,
        `Successfully applied patch to the following files:\n${files}`,
        "apply_patch failed: Patch could not be applied because 1 hunk did not match the current file content.",
      ),
    };
  }
  const r = rand();
  if (r < 0.35) {
    const text = bodyText(res, rand, logNormal(rand, 1500, 0.8, 20, 60_000));
    const fate = fateOf(rand, false);
    return {
      name: "editor",
      input: { path, new_text: MARK },
      bodies: [`${text}\n`],
      fate,
      kind: "create",
      resultBodies: [],
      result: editorResultJson(`edit:${path}`, fate, `File created successfully at: ${abs}`, ""),
    };
  }
  if (r < 0.85) {
    const pair = editPair(linesOf(res, rand, logNormal(rand, 600, 0.8, 40, 20_000)), rand, pick);
    const fate = fateOf(rand, true);
    return {
      name: "editor",
      input: { path, old_text: MARK, new_text: MARK },
      bodies: [pair.oldLines.join("\n"), pair.newLines.join("\n")],
      fate,
      kind: "replace",
      resultBodies: [],
      result: editorResultJson(
        `edit:${path}`,
        fate,
        editedResult(abs, pair),
        `Editor operation failed: No replacement performed: text not found in ${abs}.`,
      ),
    };
  }
  const line = 1 + Math.floor(rand() * 200);
  const fate = fateOf(rand, false);
  return {
    name: "editor",
    input: { path, insert_line: line, new_text: MARK },
    bodies: [linesOf(res, rand, logNormal(rand, 300, 0.8, 20, 8000)).join("\n")],
    fate,
    kind: "insert",
    resultBodies: [],
    result: editorResultJson(`insert:${path}`, fate, `Inserted content at line ${line} in ${abs}.`, ""),
  };
}

/** The JSON string an editor / apply_patch result is stored as: success, failure, or the denial. */
function editorResultJson(query: string, fate: CallFate, result: string, error: string): string {
  if (fate === "denied") return JSON.stringify({ error: DENIAL });
  if (fate === "failed") return JSON.stringify({ query, result: "", error, success: false });
  return JSON.stringify({ query, result, success: true });
}

/**
 * A run_commands call: 15 % a `git add -A && git commit` (the agent committing its work), else the
 * test run and a status; a few denied. Its result: one `{query, result, success}` per command, the
 * first holding the output (`output`, drawn by the caller, in place of `MARK`).
 */
export function commandCall(rand: Rand, turn: number, output: () => string, MARK: string): PlannedCall {
  const commit = rand() < 0.15;
  const commands = commit
    ? [`git add -A && git commit -q -m 'agent: turn ${turn}'`]
    : ["npm test -- --reporter=dot", "git status"];
  const fate: CallFate = rand() < 0.03 ? "denied" : "applied";
  const denied = fate === "denied";
  return {
    name: "run_commands",
    input: { commands },
    bodies: [],
    fate,
    kind: commit ? "commit" : "other",
    result: denied
      ? JSON.stringify({ error: DENIAL })
      : commands.map((c, i) => ({ query: c, result: i === 0 && !commit ? MARK : "", success: true })),
    resultBodies: denied || commit ? [] : [output()],
  };
}
