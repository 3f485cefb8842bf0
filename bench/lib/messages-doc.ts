/**
 * Generates realistic Cline CLI `<id>.messages.json` documents (docs/cline-format.md §4 shape,
 * `JSON.stringify(doc, null, 2)` layout) of any size, streamed to disk in pieces so that
 * documents larger than V8's maximum string length can be produced. Used by the scanner
 * benchmark and by the scanner's huge-document test.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { messagesDocumentSchema } from "../../src/adapter/cline/schema.ts";

export interface ExpectedMetrics {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  readonly cost?: number;
}

export interface ExpectedMessage {
  readonly id: string;
  readonly role: "user" | "assistant";
  readonly ts: number;
  readonly modelInfo?: { readonly id: string; readonly provider: string };
  readonly metrics?: ExpectedMetrics;
  readonly content: readonly {
    readonly type: string;
    readonly id?: string;
    readonly name?: string;
    readonly tool_use_id?: string;
  }[];
}

export interface ExpectedDoc {
  readonly version: number;
  readonly sessionId: string;
  readonly agent: string;
  readonly messages: readonly ExpectedMessage[];
}

export interface DocSpec {
  /** Number of turns: one assistant message with metrics plus one tool-result user message each. */
  readonly turns: number;
  /** Approximate raw size of turn `t`'s tool result body, in characters. */
  readonly toolResultChars: (turn: number) => number;
  /** Approximate size of each assistant text / thinking block. */
  readonly textChars?: number;
  readonly seed?: number;
}

/** Deterministic PRNG (mulberry32): benchmarks and tests must see the same bytes every run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  "the a of to and in is it that for on with as this was by be are from or an at not " +
  "file function value error test build config module import export return const let type " +
  "session token cache model request response provider message content result tool command"
).split(" ");

/** A pool of lines mixing prose, source code (quotes, backslashes), shell output and JSON. */
function linePool(rand: () => number): string[] {
  const pick = (): string => WORDS[Math.floor(rand() * WORDS.length)] as string;
  const words = (k: number): string => Array.from({ length: k }, pick).join(" ");
  const lines: string[] = [];
  for (let i = 0; i < 4000; i++) {
    const r = rand();
    if (r < 0.3) {
      lines.push(`${words(6 + Math.floor(rand() * 14))}.`);
    } else if (r < 0.6) {
      const ind = " ".repeat(2 * Math.floor(rand() * 4));
      lines.push(
        `${ind}const ${pick()}_${i} = ${pick()}("${words(2)}", '${pick()}', { key: "${pick()}\\n" }); // ${words(3)}`,
      );
    } else if (r < 0.8) {
      lines.push(
        `-rw-r--r--  1 user staff ${Math.floor(rand() * 99999)} Nov 30 07:${10 + (i % 50)} src/${pick()}/${pick()}_${i}.ts`,
      );
    } else if (r < 0.9) {
      lines.push(
        JSON.stringify({ level: "info", msg: words(5), id: i, ok: rand() < 0.5, path: `C:\\tmp\\${pick()}` }),
      );
    } else {
      lines.push(`\t${words(4)} \u00e9\u00e8 \u4e2d\u6587 \u{1f600} ${i}\r`);
    }
  }
  return lines;
}

function body(pool: string[], rand: () => number, chars: number): string {
  const parts: string[] = [];
  let len = 0;
  while (len < chars) {
    const l = pool[Math.floor(rand() * pool.length)] as string;
    parts.push(l);
    len += l.length + 1;
  }
  return parts.join("\n");
}

const MODELS = [
  { id: "claude-sonnet-4-5-20250929", provider: "anthropic", family: "claude-sonnet" },
  { id: "gpt-5-mini", provider: "openai" },
  { id: "mock-model", provider: "openai-compatible" },
] as const;

/** Re-indents a `JSON.stringify(x, null, 2)` text one level deeper (strings hold no raw newlines). */
function indent(json: string, by: string): string {
  return by + json.replace(/\n/g, `\n${by}`);
}

/**
 * Writes a messages document to `path` and returns what an allow-list scan must find.
 * Large bodies are encoded once per (size, variant) and reused, so a 1 GB document
 * takes seconds, not minutes, to write.
 */
export function writeMessagesDoc(path: string, spec: DocSpec): { bytes: number; expected: ExpectedDoc } {
  const rand = prng(spec.seed ?? 1);
  const pool = linePool(rand);
  const textChars = spec.textChars ?? 600;
  const bodies = new Map<string, string>(); // "size:variant" -> JSON-encoded body
  const encodedBody = (chars: number, variant: number): string => {
    const key = `${chars}:${variant}`;
    let enc = bodies.get(key);
    if (enc === undefined) {
      enc = JSON.stringify(body(pool, rand, chars));
      if (chars > 1_000_000) bodies.set(key, enc); // only big bodies are worth keeping
    }
    return enc;
  };

  const sessionId = "1796018200459_9svp0";
  const fd = openSync(path, "w");
  let bytes = 0;
  const out = (s: string): void => {
    bytes += writeSync(fd, s);
  };
  const messages: ExpectedMessage[] = [];
  try {
    out(
      `{\n  "version": 1,\n  "updated_at": "2026-11-30T05:56:40.728Z",\n  "agent": "lead",\n` +
        `  "sessionId": ${JSON.stringify(sessionId)},\n` +
        `  "origin": {\n    "source": "cli",\n    "mode": "user",\n    "sessionId": ${JSON.stringify(sessionId)},\n    "version": "3.0.65"\n  },\n` +
        `  "messages": [\n`,
    );
    let ts = 1796018200520;
    const first = {
      id: "df79ce55-5d4f-4c1a-9a55-0f7a3c1e2b11",
      role: "user" as const,
      ts,
      content: [{ type: "text", text: `<user_input mode="act">${body(pool, rand, textChars)}</user_input>` }],
    };
    out(indent(JSON.stringify(first, null, 2), "    "));
    messages.push({ id: first.id, role: "user", ts, content: [{ type: "text" }] });

    const MARK = "@@BODY@@";
    for (let t = 0; t < spec.turns; t++) {
      const model = MODELS[t % MODELS.length] as (typeof MODELS)[number];
      const toolId = `toolu_${t.toString(36)}_0`;
      const toolName = t % 4 === 0 ? "editor" : "run_commands";
      const metrics: ExpectedMetrics = {
        inputTokens: 1000 + Math.floor(rand() * 200000),
        outputTokens: 1 + Math.floor(rand() * 8000),
        cacheReadTokens: Math.floor(rand() * 100000),
        cacheWriteTokens: Math.floor(rand() * 5000),
        ...(model.provider === "anthropic" ? { cost: Math.round(rand() * 1e8) / 1e8 } : {}),
      };
      ts += 1 + Math.floor(rand() * 5000);
      const asst = {
        id: `msg_${t.toString(36).padStart(8, "A")}`,
        role: "assistant" as const,
        ts,
        content: [
          { type: "thinking", thinking: body(pool, rand, textChars) },
          { type: "text", text: body(pool, rand, textChars) },
          {
            type: "tool_use",
            id: toolId,
            name: toolName,
            input:
              toolName === "editor"
                ? { path: "src/a.ts", new_text: body(pool, rand, textChars) }
                : { commands: ["ls -1"] },
          },
        ],
        modelInfo: model,
        metrics,
      };
      out(`,\n${indent(JSON.stringify(asst, null, 2), "    ")}`);
      messages.push({
        id: asst.id,
        role: "assistant",
        ts,
        modelInfo: { id: model.id, provider: model.provider },
        metrics,
        content: [{ type: "thinking" }, { type: "text" }, { type: "tool_use", id: toolId, name: toolName }],
      });

      ts += 1 + Math.floor(rand() * 5000);
      const resultId = `msg_${t.toString(36).padStart(7, "R")}r`;
      const chars = Math.max(1, Math.floor(spec.toolResultChars(t)));
      // The editor tool's result is a JSON string; run_commands gives an array of records.
      const content = toolName === "editor" ? MARK : [{ query: "ls -1", result: MARK, success: true }];
      const res = {
        id: resultId,
        role: "user" as const,
        ts,
        content: [{ type: "tool_result", tool_use_id: toolId, name: toolName, content }],
      };
      const [pre, post] = indent(JSON.stringify(res, null, 2), "    ").split(`"${MARK}"`) as [string, string];
      out(`,\n${pre}`);
      out(encodedBody(chars, t % 3));
      out(post);
      messages.push({
        id: resultId,
        role: "user",
        ts,
        content: [{ type: "tool_result", tool_use_id: toolId, name: toolName }],
      });
    }
    out(`\n  ],\n  "system_prompt": ${JSON.stringify(`You are Cline. ${body(pool, rand, 4000)}`)}\n}\n`);
  } finally {
    closeSync(fd);
  }
  return { bytes, expected: { version: 1, sessionId, agent: "lead", messages } };
}

/**
 * The allow-list a Cline adapter needs (names and counts only). Shared by the benchmark
 * and the scanner tests so both measure the same work.
 */
export const messagesSchema = messagesDocumentSchema;
