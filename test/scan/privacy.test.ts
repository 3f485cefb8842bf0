/**
 * PRIVACY CANARY. Every field the allow-list does not name carries a unique canary; after a
 * scan, a V8 heap snapshot of the scanning process must not contain any of them, while the
 * control (JSON.parse of the same bytes) must contain all of them, proving the probe works.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { project } from "./helpers.ts";
import { privacySchema } from "./privacy-child.ts";

// Built from parts at run time, so no source text of this suite holds a whole canary.
const PREFIX = ["CAN", "ARY", "_7f3a", "9c_"].join("");
const FIELDS = [
  "updated_at",
  "origin",
  "usertext",
  "thinking",
  "text",
  "input_value",
  "input_key",
  "input_nested",
  "result_array",
  "result_json",
  "result_query",
  "is_error_string",
  "system_prompt",
  "metadata",
  "block_unknown_value",
  "block_unknown_key",
  "msg_unknown_key",
  "msg_unknown_value",
  "family",
  "too_long_agent",
  "big_body",
] as const;
type Field = (typeof FIELDS)[number];
const canary = (f: Field): string => `${PREFIX}${f}`;

function buildDoc(): Record<string, unknown> {
  const body = (f: Field, n: number): string =>
    Array.from({ length: n }, (_, i) => `line ${i} "quoted" \\ ${canary(f)} é😀`).join("\n");
  return {
    version: 1,
    updated_at: canary("updated_at"),
    agent: `lead ${canary("too_long_agent")} ${"x".repeat(2000)}`,
    sessionId: "1796018200459_9svp0",
    origin: { source: "cli", note: canary("origin") },
    messages: [
      {
        id: "df79ce55",
        role: "user",
        ts: 1796018200520,
        content: [{ type: "text", text: canary("usertext") }],
      },
      {
        id: "msg_8Zq37Jxd",
        role: "assistant",
        ts: 1796018200592,
        content: [
          { type: "thinking", thinking: canary("thinking") },
          { type: "text", text: canary("text") },
          {
            type: "tool_use",
            id: "toolu_1",
            name: "run_commands",
            input: {
              commands: [canary("input_value")],
              [canary("input_key")]: 1,
              deep: { x: [{ y: canary("input_nested") }] },
            },
          },
          {
            type: "text",
            text: body("big_body", 3000),
            [canary("block_unknown_key")]: canary("block_unknown_value"),
          },
        ],
        modelInfo: { id: "claude-sonnet-4-5", provider: "anthropic", family: canary("family") },
        metrics: {
          inputTokens: 840,
          outputTokens: 313,
          cacheReadTokens: 0,
          cacheWriteTokens: 719,
          cost: 0.00775425,
        },
        [canary("msg_unknown_key")]: canary("msg_unknown_value"),
      },
      {
        id: "msg_Xa2zOv0t",
        role: "user",
        ts: 1796018200614,
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_1",
            name: "run_commands",
            is_error: true,
            content: [{ query: canary("result_query"), result: canary("result_array"), success: true }],
          },
        ],
      },
      {
        id: "msg_editor01",
        role: "user",
        ts: 1796018200615,
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_2",
            name: "editor",
            // An allow-listed flag of the wrong type is skipped as bytes, not decoded.
            is_error: canary("is_error_string"),
            content: JSON.stringify({ path: "a.ts", text: canary("result_json") }),
          },
        ],
      },
      {
        id: "error_1",
        role: "assistant",
        ts: 1796018200616,
        metadata: { displayOnly: true, displayRole: "error", detail: canary("metadata") },
        content: [{ type: "text", text: "provider error" }],
      },
    ],
    system_prompt: canary("system_prompt"),
  };
}

let dir = "";
let docPath = "";
let expected: unknown;
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const childPath = fileURLToPath(new URL("./privacy-child.ts", import.meta.url));

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "scan-privacy-"));
  docPath = join(dir, "doc.messages.json");
  const text = JSON.stringify(buildDoc(), null, 2);
  writeFileSync(docPath, text);
  expected = project(privacySchema, JSON.parse(text));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Runs one child; returns the raw snapshot bytes and the child's printed result. */
function snapshotOf(mode: string): { snap: Buffer; result: unknown } {
  const snapPath = join(dir, `${mode}.heapsnapshot`);
  const child = spawnSync(process.execPath, ["--import", tsxLoader, childPath, mode, docPath, snapPath], {
    encoding: "utf8",
    maxBuffer: 16 << 20,
  });
  if (child.status !== 0) throw new Error(`child ${mode} failed: ${child.stderr}`);
  const snap = readFileSync(snapPath);
  rmSync(snapPath);
  return { snap, result: JSON.parse(child.stdout.trim()) };
}

function contains(snap: Buffer, s: string): boolean {
  return snap.includes(Buffer.from(s, "utf8")) || snap.includes(Buffer.from(s, "utf16le"));
}

describe("privacy canary (heap snapshot)", () => {
  it("control: JSON.parse of the same document leaves every canary in the heap", () => {
    const { snap } = snapshotOf("parse");
    for (const f of FIELDS) {
      if (f === "too_long_agent" || f === "big_body") continue; // inside longer strings; checked by prefix
      expect(contains(snap, canary(f)), f).toBe(true);
    }
    expect(contains(snap, `${PREFIX}too_long_agent`)).toBe(true);
    expect(contains(snap, `${PREFIX}big_body`)).toBe(true);
  });

  it("control: a scanner allow-listing block text leaves that canary (and only that one) in the heap", () => {
    const { snap } = snapshotOf("scan-file-leaky");
    expect(contains(snap, canary("text"))).toBe(true);
    expect(contains(snap, canary("thinking"))).toBe(false);
    expect(contains(snap, canary("system_prompt"))).toBe(false);
  });

  for (const mode of ["scan-file", "scan-file-7", "scan-file-indexOf", "scan-buffer"]) {
    it(`${mode}: no canary reaches the heap, while the allow-listed fields are decoded`, () => {
      const { snap, result } = snapshotOf(mode);
      expect(result).toEqual(JSON.parse(JSON.stringify(expected)));
      expect((result as { messages: { metrics?: unknown }[] }).messages[1]?.metrics).toEqual({
        inputTokens: 840,
        outputTokens: 313,
        cacheReadTokens: 0,
        cacheWriteTokens: 719,
        cost: 0.00775425,
      });
      // The tool_result fields the signals need (timing, join, outcome) are decoded...
      const msgs = (result as { messages: { ts?: unknown; content?: Record<string, unknown>[] }[] }).messages;
      expect(msgs[2]?.ts).toBe(1796018200614);
      expect(msgs[2]?.content?.[0]).toEqual({
        type: "tool_result",
        tool_use_id: "toolu_1",
        name: "run_commands",
        is_error: true,
        // Of the result's JSON array only its success flag (and whether an error is there).
        content: [{ success: true }],
      });
      expect(msgs[3]?.content?.[0]?.is_error).toEqual({ wrongType: "string" });
      // ...and nothing else of them.
      const leaked = FIELDS.filter((f) => contains(snap, canary(f)));
      expect(leaked).toEqual([]);
      expect(contains(snap, PREFIX)).toBe(false);
    });
  }
});
