/**
 * A messages document larger than V8's maximum string length (JSON.parse cannot even be
 * handed it as one string) must scan in chunks, with every metric found and exact.
 */
import { constants } from "node:buffer";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExpectedDoc, messagesSchema, writeMessagesDoc } from "../../bench/lib/messages-doc.ts";
import { scanFile } from "../../src/scan/scanner.ts";

let dir = "";
let path = "";
let bytes = 0;
let expected: ExpectedDoc;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "scan-huge-"));
  path = join(dir, "huge.messages.json");
  // 62 turns with ~10 MB tool results (JSON-escaped text: quotes, backslashes, unicode).
  ({ bytes, expected } = writeMessagesDoc(path, { turns: 62, toolResultChars: () => 10_000_000, seed: 2 }));
}, 120_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("huge document", () => {
  it("is larger than 600 MB and than V8's maximum string length", () => {
    expect(bytes).toBeGreaterThan(600 * 1024 * 1024);
    // Even an all-ASCII decode would need a string of `bytes` characters: JSON.parse is impossible.
    expect(bytes).toBeGreaterThan(constants.MAX_STRING_LENGTH);
  });

  it("scans with every metric found and exact", async () => {
    const res = await scanFile(path, messagesSchema);
    expect(res.bytesRead).toBe(bytes);
    expect(res.statAfter.size).toBe(bytes);
    const value = res.value as { messages: Record<string, unknown>[]; sessionId: string; agent: string };
    expect(value.sessionId).toBe(expected.sessionId);
    expect(value.agent).toBe("lead");
    expect(value.messages).toHaveLength(expected.messages.length);
    let withMetrics = 0;
    expected.messages.forEach((em, i) => {
      const got = value.messages[i] as Record<string, unknown>;
      expect(got.id).toBe(em.id);
      expect(got.ts).toBe(em.ts);
      // The blocks' ids and names as generated (tool inputs and results also yield their allow-listed flags).
      expect(got.content).toMatchObject(em.content);
      if (em.metrics !== undefined) {
        withMetrics++;
        expect(got.metrics).toEqual(em.metrics);
        expect(got.modelInfo).toEqual(em.modelInfo);
      } else {
        expect(got.metrics).toBeUndefined();
      }
    });
    expect(withMetrics).toBe(62);
  }, 120_000);
});
