import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectCanaryAbsent, runCanaryChild } from "../../../helpers/canary.ts";
import { makeTree } from "../../../helpers/cline-tree.ts";
import { captureFileName, captureRecord } from "./helpers.ts";

const ID = "1796000000000_capcn";
let dir: string;
let home: string;
let caps: string;
let canary: string;

/** A full-mode ai_sdk_prompt record with a canary in every field outside the allow-list. */
function promptRecord(c: (field: string) => string): Record<string, unknown> {
  const rec = captureRecord({
    sessionId: ID,
    iteration: 2,
    roleCounts: { system: 1, user: 2, assistant: 1, tool: 1 },
    toolResults: 1,
    reasoningBlocks: 1,
    payload: {
      messages: [
        { role: "user", content: [{ type: "text", text: c("user_text") }] },
        {
          role: "assistant",
          content: [
            { type: "reasoning", text: c("thinking") },
            { type: "tool-call", input: { cmd: c("tool_input") } },
          ],
        },
        { role: "tool", content: [{ type: "tool-result", output: { value: c("tool_result") } }] },
      ],
      system: c("system_prompt"),
      tools: { [c("tool_name_key")]: { description: c("tool_description") } },
      providerOptions: { anthropic: { note: c("provider_options") } },
    },
  });
  const corr = rec.correlation as Record<string, unknown>;
  corr.distinctId = c("distinct_id");
  corr.clientName = c("client_name");
  corr.extra = { nested: c("correlation_extra") };
  const summary = rec.summary as Record<string, unknown>;
  summary.sha256 = c("summary_sha");
  const messages = summary.messages as Record<string, unknown>;
  messages.sha256 = c("messages_sha");
  // An unknown role is a KEY inside an allow-listed object: compared as bytes, never decoded.
  (messages.roleCounts as Record<string, number>)[c("role_key")] = 1;
  messages.messageCount = 6;
  messages.largestMessages = [{ index: 0, role: c("largest_role"), sha256: c("largest_sha") }];
  messages.messages = [{ index: 0, role: "user", sha256: c("message_sha"), preview: c("message_preview") }];
  rec.unknownTopLevel = c("top_level");
  return rec;
}

/** The matching wire_request record: url, method and the request body (a JSON string). */
function wireRecord(c: (field: string) => string): Record<string, unknown> {
  const rec = captureRecord({ sessionId: ID, iteration: 2, stage: "wire_request", payloadBytes: 30_000 });
  rec.payload = {
    url: `http://127.0.0.1/v1/${c("url")}`,
    method: "POST",
    body: JSON.stringify({ model: "m", messages: [{ role: "system", content: c("wire_body") }] }),
  };
  return rec;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "cap-canary-"));
  // Built at run time from random bytes: no source file or module holds it.
  canary = `CNRY${randomBytes(8).toString("hex")}`;
  const c = (field: string) => `${canary}_${field}`;
  home = makeTree(join(dir, "home"), [{ id: ID, cwd: "/work/ws", messages: [] }]).home;
  caps = join(dir, "caps");
  mkdirSync(caps);
  const id = "cap_run_canary_2_0123456789abcdef";
  writeFileSync(
    join(caps, captureFileName(id, "ai_sdk_prompt", 1)),
    JSON.stringify(promptRecord(c), null, 2),
  );
  writeFileSync(join(caps, captureFileName(id, "wire_request", 1)), JSON.stringify(wireRecord(c), null, 2));
  // A truncated payload as Cline writes it over CLINE_CAPTURE_MAX_PREVIEW_BYTES.
  const truncated = captureRecord({ sessionId: ID, iteration: 3, payloadBytes: 90_000 });
  truncated.payload = { truncated: true, bytes: 90_000, sha256: c("trunc_sha"), preview: c("trunc_preview") };
  writeFileSync(
    join(caps, captureFileName("cap_run_canary_3_0123456789abcdef", "ai_sdk_prompt", 1)),
    JSON.stringify(truncated),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runChild(name: string, control: boolean) {
  return runCanaryChild("test/adapter/cline/captures/canary-child.ts", dir, name, [home, caps], control);
}

describe("captures privacy by construction", () => {
  it("no payload, body, hash or unknown field becomes a string: absent from the heap, the ledger and all output", () => {
    const { snapshot, state, out } = runChild("collect", false);
    expectCanaryAbsent({ snapshot, state, out }, canary);
    // ...while the allow-listed facts made it through.
    expect(out).toContain("wire_request");
    expect(out).toContain("cline.request.estimated_tokens");
    expect(out).toContain('"estimatedTokens":10000'); // ceil(30000 / 3) of the wire record
    expect(out).toContain('"messageCount":6');
  });

  it("control: decoding the captures the ordinary way puts the canary in the heap", () => {
    const { snapshot } = runChild("control", true);
    expect(snapshot.includes(Buffer.from(canary))).toBe(true);
  });
});
