/** Task-format trees for tests: `<root>/tasks/<id>/ui_messages.json` and `state/taskHistory.json`. */
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseUiMessages } from "../../../src/adapter/cline-tasks/parser.ts";
import { uiMessagesSchema } from "../../../src/adapter/cline-tasks/schema.ts";
import type { TaskRoot } from "../../../src/adapter/cline-tasks/types.ts";
import { scanBuffer } from "../../../src/scan/scanner.ts";

export type UiMessage = Record<string, unknown>;

export const OPENAI = { providerId: "openai", modelId: "gpt-4o", mode: "act" };
export const ANTHROPIC = { providerId: "anthropic", modelId: "claude-sonnet-4-5", mode: "act" };

/** A final `api_req_started` entry as the legacy core writes it (text: a JSON string). */
export function request(
  ts: number,
  counts: Record<string, number> | undefined,
  modelInfo = OPENAI,
  request = "req",
): UiMessage {
  const text = JSON.stringify(counts === undefined ? { request } : { request, ...counts });
  return { ts, type: "say", say: "api_req_started", text, modelInfo, conversationHistoryIndex: 0 };
}

/** The counts of a final entry (no cache tokens). */
export const counts = (tokensIn: number, tokensOut: number, cost = 0) => ({
  tokensIn,
  tokensOut,
  cacheReads: 0,
  cacheWrites: 0,
  cost,
});

/** A final entry's counts, cache and cost included (`c` in the tests). */
export const recorded = (tokensIn: number, tokensOut: number, cacheReads = 0, cacheWrites = 0, cost = 0) => ({
  tokensIn,
  tokensOut,
  cacheReads,
  cacheWrites,
  cost,
});

/** `n` settled requests (each answered by a text), their counts all distinct. */
export function settledRequests(n: number): UiMessage[] {
  return Array.from({ length: n }, (_, i) => [
    request(10 * (i + 1), counts(100 + 50 * i, 20 + 10 * i, 0.001)),
    say(10 * (i + 1) + 1, "text", "ok"),
  ]).flat();
}

export function say(ts: number, kind: string, text: string): UiMessage {
  return { ts, type: "say", say: kind, text, modelInfo: OPENAI };
}

export function ask(ts: number, kind: string, text = ""): UiMessage {
  return { ts, type: "ask", ask: kind, text };
}

export function tool(ts: number, name: string, extra: Record<string, unknown> = {}): UiMessage {
  return say(ts, "tool", JSON.stringify({ tool: name, path: "src/a.ts", content: "x", ...extra }));
}

/** Writes (or rewrites, through a temp file and a rename as Cline does) one task's messages. */
export function writeTask(root: string, taskId: string, messages: readonly UiMessage[]): string {
  const dir = join(root, "tasks", taskId);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "ui_messages.json");
  const tmp = join(dir, `ui_messages.json.tmp.${Date.now()}.x1.json`);
  writeFileSync(tmp, JSON.stringify(messages));
  renameSync(tmp, path);
  return path;
}

export function writeHistory(root: string, entries: readonly Record<string, unknown>[]): void {
  mkdirSync(join(root, "state"), { recursive: true });
  writeFileSync(join(root, "state", "taskHistory.json"), JSON.stringify(entries));
}

export const ROOT: TaskRoot = {
  path: "/h/.cline/data",
  client: "cli",
  product: "Cline CLI",
  foundBy: "<home>/.cline",
};
export const TASK = "1796000000000";

/** One task's messages through the allow-list scanner and the parser. */
export function parse(msgs: readonly UiMessage[], root: TaskRoot = ROOT) {
  const doc = scanBuffer(Buffer.from(JSON.stringify(msgs)), uiMessagesSchema);
  return parseUiMessages(doc, {
    root,
    taskId: TASK,
    path: `${root.path}/tasks/${TASK}/ui_messages.json`,
    project: "/p",
  });
}

/** A `say: "subagent_usage"` message: one use_subagents call's sums (`source: "subagents"`). */
export function subagentUsage(ts: number, counts: Record<string, number>, modelInfo = OPENAI): UiMessage {
  const text = JSON.stringify({ source: "subagents", ...counts });
  return { ts, type: "say", say: "subagent_usage", text, modelInfo };
}

/** The call's status message (`say: "subagent"`), its prompts and running snapshots inside. */
export function subagentStatus(ts: number, partial = false): UiMessage {
  const items = [{ index: 1, prompt: "SECRET-PROMPT", status: "completed", inputTokens: 9, outputTokens: 9 }];
  const text = JSON.stringify({ status: partial ? "running" : "completed", inputTokens: 9, items });
  return { ts, type: "say", say: "subagent", text, modelInfo: OPENAI, ...(partial ? { partial } : {}) };
}
