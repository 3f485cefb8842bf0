/**
 * `embedded(inner, {rawFallback})` (src/scan/schema.ts): a string holding JSON in some messages and
 * a plain text in others (the task format's `text`: a command line) gives the inner object for
 * JSON and, for a text that is not JSON, its raw escaped bytes (never decoded) when at most
 * `rawFallback` bytes long, else `not-json`; the same for every piece size and skipper.
 */
import { describe, expect, it } from "vitest";
import { scanBuffer } from "../../src/scan/scanner.ts";
import { arr, embedded, isWrongType, num, obj, type RawBytes, str } from "../../src/scan/schema.ts";
import { project, scanPieces } from "./helpers.ts";

const LIMIT = 64;
const schema = arr(obj({ say: str(64), text: embedded(obj({ tokensIn: num }), { rawFallback: LIMIT }) }));
const plain = arr(obj({ say: str(64), text: embedded(obj({ tokensIn: num })) }));

const msgs = [
  { say: "api_req_started", text: JSON.stringify({ request: "x", tokensIn: 12 }) },
  { say: "command", text: 'git commit -m "a \\"quoted\\" msg" && gh pr create' },
  { say: "command", text: "é 😀\ttab\nline" },
  { say: "text", text: "y".repeat(LIMIT + 1) },
  { say: "text", text: "" },
  { say: "text", text: "[1, 2]" },
  { say: "text", text: 7 },
];

const rawText = (v: unknown): string => {
  const r = v as RawBytes;
  return r.buf.subarray(r.start, r.end).toString("latin1");
};

describe("embedded strings with a raw fallback", () => {
  it("JSON decodes as before; a short text that is not JSON gives its raw escaped bytes", () => {
    const out = scanBuffer(Buffer.from(JSON.stringify(msgs)), schema) as { text: unknown }[];
    expect(out[0]?.text).toEqual({ tokensIn: 12 });
    // The bytes as stored in the document: escaped once, never unescaped.
    expect(rawText(out[1]?.text)).toBe(JSON.stringify(msgs[1]?.text).slice(1, -1));
    expect((out[1]?.text as RawBytes).truncated).toBe(false);
    expect(Buffer.from(rawText(out[2]?.text), "latin1")).toEqual(
      Buffer.from(JSON.stringify(msgs[2]?.text).slice(1, -1), "utf8"),
    );
    // Longer than the limit: not-json, as without a fallback.
    const long = out[3]?.text;
    expect(isWrongType(long) && long.wrongType).toBe("not-json");
    expect(rawText(out[4]?.text)).toBe("");
    expect(rawText(out[5]?.text)).toBe("[1, 2]");
    expect(out[6]?.text).toEqual({ wrongType: "number" });
  });

  it("without a fallback nothing changes: not-json", () => {
    const out = scanBuffer(Buffer.from(JSON.stringify(msgs)), plain) as { text: unknown }[];
    for (const i of [1, 2, 3, 4, 5]) {
      const t = out[i]?.text;
      expect(isWrongType(t) && t.wrongType, `message ${i}`).toBe("not-json");
    }
  });

  it("the same for every piece size and skipper (a text split across chunks)", () => {
    const buf = Buffer.from(JSON.stringify(msgs));
    const expected = project(schema, msgs);
    for (const sizes of [[1], [2], [3], [5], [7], [13], [64], [buf.length]])
      for (const skipper of ["indexOf", "wasm"] as const)
        expect(scanPieces(buf, schema, sizes, skipper), `sizes ${sizes} ${skipper}`).toEqual(expected);
  });

  it("with rawFallbackIf, only after a listed sibling value: other texts are not-json, never copied", () => {
    const only = arr(
      obj({
        say: str(64),
        ask: str(64),
        text: embedded(obj({ tokensIn: num }), {
          rawFallback: LIMIT,
          rawFallbackIf: { say: ["command"], ask: ["command"] },
        }),
      }),
    );
    const docs = [
      { say: "command", text: "git commit -m x" },
      { ask: "command", text: "gh pr create" },
      { say: "text", text: "prose, not a command" },
      { ask: "followup", text: "a question" },
      { text: "no say before it", say: "command" }, // the field comes after the text: not seen
      { say: "api_req_started", text: JSON.stringify({ tokensIn: 4 }) },
    ];
    const buf = Buffer.from(JSON.stringify(docs));
    for (const sizes of [[1], [3], [buf.length]]) {
      const out = scanPieces(buf, only, sizes, "indexOf") as { text: unknown }[];
      expect(rawText(out[0]?.text)).toBe("git commit -m x");
      expect(rawText(out[1]?.text)).toBe("gh pr create");
      for (const i of [2, 3, 4]) {
        const t = out[i]?.text;
        expect(isWrongType(t) && t.wrongType, `message ${i}`).toBe("not-json");
      }
      expect(out[5]?.text).toEqual({ tokensIn: 4 });
    }
    expect(() => embedded(obj({}), { rawFallback: 0, rawFallbackIf: { say: ["x"] } })).toThrow(RangeError);
  });
});
