import { describe, expect, it } from "vitest";
import { scanBuffer } from "../../src/scan/scanner.ts";
import { arr, embedded, isWrongType, num, obj, oneOf, str } from "../../src/scan/schema.ts";
import { type Json, noisyStringify, project, scanPieces } from "./helpers.ts";

const inner = obj({
  tokensIn: num,
  tokensOut: num,
  cost: num,
  tool: oneOf(["readFile", "newFileCreated"]),
  id: str(64),
});
const schema = arr(obj({ say: str(64), text: embedded(inner) }));

/** A PRNG so every run sees the same noise (and a failure can be replayed). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const REQUEST = 'line "one" \\ two\n\ttab é 😀 \u2028 {"tokensIn": 999} \\"x';

function messages(): Json[] {
  return [
    {
      say: "api_req_started",
      text: JSON.stringify({ request: REQUEST, tokensIn: 12, tokensOut: 3, cost: 0.5 }),
    },
    { say: "api_req_started", text: JSON.stringify({ request: REQUEST.repeat(50) }) },
    { say: "tool", text: JSON.stringify({ tool: "readFile", path: "/a/b", content: REQUEST }) },
    { say: "tool", text: JSON.stringify({ tool: "someNewTool", path: "x" }) },
    { say: "tool", text: JSON.stringify({ tool: "read\u0046ile", id: 'é😀\n\tx"q\\' }) },
    { say: "command", text: "ls -la && echo '{\"tokensIn\": 5}'" },
    { say: "text", text: "Hello, I will read the file." },
    { say: "text", text: "123 then words" },
    { say: "text", text: '{"tokensIn": 7} trailing' },
    { say: "text", text: '"just a string"' },
    { say: "text", text: "" },
    { say: "text", text: "   " },
    { say: "text", text: 5 },
    { say: "reasoning", text: JSON.stringify([1, 2, 3]) },
    // Whitespace of the inner document arrives as single escapes (\n, \t, \r).
    {
      say: "api_req_started",
      text: JSON.stringify({ tokensIn: 1, id: "a\nb" }, null, "\t").replace(/\n/g, "\r\n"),
    },
  ];
}

describe("embedded JSON strings", () => {
  it("decode the inner allow-list as JSON.parse twice would, for every piece size and skipper", () => {
    const msgs = messages();
    const expected = project(schema, msgs);
    for (let seed = 1; seed <= 6; seed++) {
      const text = noisyStringify(msgs, { rand: rng(seed), ws: 0.2, escape: 0.1 });
      const buf = Buffer.from(text);
      expect(JSON.parse(text)).toEqual(msgs);
      for (const sizes of [[1], [2], [3], [5], [7], [13], [64], [buf.length]]) {
        for (const skipper of ["indexOf", "wasm"] as const) {
          expect(scanPieces(buf, schema, sizes, skipper), `seed ${seed} sizes ${sizes} ${skipper}`).toEqual(
            expected,
          );
        }
      }
    }
  });

  it("give the numbers of a final request, nothing for an in-flight one, not-json for prose", () => {
    const out = scanBuffer(Buffer.from(JSON.stringify(messages())), schema) as Record<string, unknown>[];
    expect((out[0] as { text: unknown }).text).toEqual({ tokensIn: 12, tokensOut: 3, cost: 0.5 });
    expect((out[1] as { text: unknown }).text).toEqual({});
    expect((out[2] as { text: { tool: unknown } }).text.tool).toBe("readFile");
    expect((out[3] as { text: { tool: unknown } }).text.tool).toEqual({ wrongType: "unlisted" });
    expect((out[4] as { text: { tool: unknown } }).text.tool).toBe("readFile");
    for (const i of [5, 6, 7, 8, 10, 11]) {
      const t = (out[i] as { text: unknown }).text;
      expect(isWrongType(t) && t.wrongType, `message ${i}`).toBe("not-json");
    }
    expect((out[12] as { text: unknown }).text).toEqual({ wrongType: "number" });
  });

  it("an enum result is the schema's own constant, not a copy of the document's bytes", () => {
    const values = ["readFile"] as const;
    const s = obj({ tool: oneOf(values) });
    const v = scanBuffer(Buffer.from('{"tool":"read\\u0046ile"}'), s) as { tool: string };
    expect(v.tool).toBe("readFile");
  });
});
