/**
 * Messages documents with timed prompts, tool calls and tool results, parsed by the real
 * scanner + parser into observations, for the signal (events, traces, GenAI metrics) tests.
 */

import { parseMessagesDocument } from "../../src/adapter/cline/parser.ts";
import { messagesDocumentSchema } from "../../src/adapter/cline/schema.ts";
import type { Observation } from "../../src/adapter/types.ts";
import { scanBuffer } from "../../src/scan/scanner.ts";

export const ROOT = "1796018194209_nfmy0";
export const LEAD_PATH = `/s/${ROOT}/${ROOT}.messages.json`;
export const SUB_ID = "agent_1796018195000_abcdef";
export const SUB_PATH = `/s/${ROOT}/${SUB_ID}.messages.json`;

const M = { inputTokens: 1000, outputTokens: 100, cacheReadTokens: 600, cacheWriteTokens: 200 };

export const prompt = (id: string, ts: number) => ({
  id,
  role: "user",
  ts,
  content: [{ type: "text", text: "<user_input>do it</user_input>" }],
});

export const assistant = (
  id: string,
  ts: number,
  calls: readonly (readonly [id: string, name: string])[] = [],
  metrics: unknown = M,
) => ({
  id,
  role: "assistant",
  ts,
  content: [
    { type: "text", text: "working" },
    ...calls.map(([cid, name]) => ({ type: "tool_use", id: cid, name, input: { cmd: "ls" } })),
  ],
  modelInfo: { id: "claude-sonnet-4-5-20250929", provider: "anthropic" },
  ...(metrics === "none" ? {} : { metrics }),
});

export const toolResult = (id: string, ts: number, toolUseId: string, isError?: boolean) => ({
  id,
  role: "user",
  ts,
  content: [
    {
      type: "tool_result",
      tool_use_id: toolUseId,
      name: "run_commands",
      content: [{ query: "ls", result: "a.txt", success: !isError }],
      ...(isError === undefined ? {} : { is_error: isError }),
    },
  ],
});

export function messagesDoc(messages: unknown[], agent = "lead", sessionId = ROOT) {
  return { version: 1, agent, sessionId, messages, system_prompt: "You are Cline." };
}

/** A document as the adapter observes it (the real scanner and parser), with a given size as checkpoint. */
export function observe(
  doc: unknown,
  path = LEAD_PATH,
  size = 100,
  project = "/work/ws",
): Extract<Observation, { status: "read" }> {
  const scanned = scanBuffer(Buffer.from(JSON.stringify(doc)), messagesDocumentSchema);
  const parsed = parseMessagesDocument(scanned, path, { project });
  return {
    status: "read",
    source: { adapterId: "cline", path, origin: "walk", hint: { project } },
    checkpoint: { path, size, mtimeNs: String(size), ino: 1, dev: 1 },
    events: parsed.events,
    toolCalls: parsed.toolCalls,
    problems: parsed.problems,
    signals: parsed.signals,
  };
}

/** The lead of a two-turn session: a success, a failure, and a call left without a result. */
export function leadDoc(opts: { cancelled?: boolean; secondTurn?: boolean } = {}) {
  const t0 = 1_796_018_200_000;
  const messages: unknown[] = [
    prompt("u1", t0),
    assistant("msg_a1", t0 + 1200, [
      ["toolu_1", "run_commands"],
      ["toolu_2", "read_files"],
    ]),
    toolResult("msg_r1", t0 + 2000, "toolu_1"),
    toolResult("msg_r2", t0 + 1500, "toolu_2", true),
    assistant("msg_a2", t0 + 3000),
  ];
  if (opts.secondTurn !== false) {
    messages.push(prompt("u2", t0 + 10_000), assistant("msg_a3", t0 + 11_000, [["toolu_3", "run_commands"]]));
    if (!opts.cancelled)
      messages.push(toolResult("msg_r3", t0 + 12_500, "toolu_3"), assistant("msg_a4", t0 + 13_000));
  }
  return { t0, doc: messagesDoc(messages) };
}
