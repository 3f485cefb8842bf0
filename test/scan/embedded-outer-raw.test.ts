/**
 * `raw(max, {outer: true})` inside an embedded document (src/scan/embedded.ts): the string is crossed
 * in the OUTER raw bytes like a skipped one (embedded-skip.ts) and handed out as those bytes, escaped
 * twice (`depth: 2`), never unescaped; the fields after it decode as before. Against JSON.parse twice,
 * for every piece size, skipper and spelling of the outer escapes.
 */
import { describe, expect, it } from "vitest";
import { lineCount } from "../../src/scan/lines.ts";
import { scanBuffer } from "../../src/scan/scanner.ts";
import { arr, embedded, isWrongType, num, obj, type RawBytes, raw, str } from "../../src/scan/schema.ts";
import { type Json, project, scanPieces } from "./helpers.ts";

const inner = obj({ content: raw(1 << 20, { outer: true }), tokensIn: num, id: str(64) });
const schema = arr(obj({ say: str(64), text: embedded(inner) }));

const BS = "\\";
/** Contents whose end is easy to get wrong; each also holds a fake `"tokensIn":999` ending. */
const CONTENTS: string[] = [
  `ends in a backslash ${BS}`,
  `${BS}${BS}"`,
  `${BS}"`,
  ...[0, 1, 2, 3, 4, 5].flatMap((r) => [`${BS.repeat(r)}"x`, `x${BS.repeat(r)}"`, `x${BS.repeat(r)}`]),
  '","tokensIn":999,"x":"',
  "line 1\nline 2\r\n\tline 3 é 😀 \u2028 \u001b[31m\u0000\n",
  "------- SEARCH\nold\n=======\nnew\n+++++++ REPLACE\n",
  "",
];

/** The outer string of `text`, its `"` and `\` spelled as `\"`/`\\` or as `\u0022`/`\u005c`. */
function outer(text: string, unicode: boolean): string {
  let out = '"';
  let k = 0;
  for (const ch of text) {
    const u = unicode && k++ % 2 === 0;
    if (ch === '"') out += u ? "\\u0022" : '\\"';
    else if (ch === BS) out += u ? "\\u005c" : "\\\\";
    else out += JSON.stringify(ch).slice(1, -1);
  }
  return `${out}"`;
}

function documents(): { raw: string; value: Json }[] {
  const docs: { raw: string; value: Json }[] = [];
  for (const content of CONTENTS) {
    const texts = [
      JSON.stringify({ content, tokensIn: 5, id: "a" }),
      JSON.stringify({ tokensIn: 6, content }),
      JSON.stringify({ x: { content }, content, id: 'q\\"' }),
    ];
    for (const text of texts)
      for (const unicode of [false, true]) {
        const value: Json = [
          { say: "tool", text },
          { say: "api_req_started", text: '{"tokensIn":3}' },
        ];
        const raw = `[{"say":"tool","text":${outer(text, unicode)}},{"say":"api_req_started","text":"{\\"tokensIn\\":3}"}]`;
        docs.push({ raw, value });
      }
  }
  return docs;
}

describe("outer raw strings inside an embedded document", () => {
  it("give the content's outer bytes and decode what follows, for every piece size and skipper", () => {
    for (const { raw, value } of documents()) {
      expect(JSON.parse(raw), raw).toEqual(value);
      const expected = project(schema, value);
      const buf = Buffer.from(raw);
      for (const sizes of [[1], [2], [3], [5], [7], [11], [buf.length]])
        for (const skipper of ["indexOf", "wasm"] as const)
          expect(scanPieces(buf, schema, sizes, skipper), `${raw} sizes ${sizes} ${skipper}`).toEqual(
            expected,
          );
    }
  });

  it("are the document's own bytes at depth 2, read by the line counter as the text", () => {
    const content = 'a\nb \\ "c"\n\nlast';
    const text = JSON.stringify({ content, tokensIn: 1 });
    const doc = Buffer.from(JSON.stringify([{ say: "tool", text }]));
    const out = scanBuffer(doc, schema) as { text: { content: RawBytes; tokensIn: number } }[];
    const r = out[0]?.text.content as RawBytes;
    expect(r.depth).toBe(2);
    const bytes = Buffer.from(r.buf.subarray(r.start, r.end)).toString("utf8");
    expect(bytes).toBe(JSON.stringify(JSON.stringify(content).slice(1, -1)).slice(1, -1));
    expect(lineCount({ buf: r.buf, start: r.start, end: r.end, depth: 2 })).toBe(4);
    expect(out[0]?.text.tokensIn).toBe(1);
  });

  it("longer than the limit: too-long, and the fields after it still decode", () => {
    const small = arr(obj({ text: embedded(obj({ content: raw(8, { outer: true }), tokensIn: num })) }));
    const text = (content: string) => JSON.stringify({ content, tokensIn: 2 });
    const doc = Buffer.from(JSON.stringify([{ text: text("a\nb\nc\nd\n") }, { text: text("abc") }]));
    for (const sizes of [[1], [3], [doc.length]]) {
      const out = scanPieces(doc, small, sizes, "indexOf") as {
        text: { content: unknown; tokensIn: number };
      }[];
      // "a\nb\nc\nd\n" is 12 outer bytes (each newline `\\n`): over 8.
      const long = out[0]?.text.content;
      expect(isWrongType(long) && long.wrongType).toBe("too-long");
      expect(out[0]?.text.tokensIn).toBe(2);
      expect((out[1]?.text.content as RawBytes).end).toBe(3);
    }
  });

  it("a prefix cannot be outer", () => {
    expect(() => raw(8, { outer: true, prefix: true })).toThrow(RangeError);
  });
});
