/**
 * The skipped strings of an embedded document (the request text) are crossed in the outer raw
 * bytes without unescaping (src/scan/embedded-skip.ts): backslash runs at the edges, `\"` and `\\`
 * inside, unicode escapes (also `\u0022` / `\u005c` standing for the outer escapes), a request
 * ending in a backslash; every piece size and skipper, against JSON.parse twice.
 */
import { describe, expect, it } from "vitest";
import { crossInnerString, type InnerSkip } from "../../src/scan/embedded-skip.ts";
import { arr, embedded, num, obj, oneOf, str } from "../../src/scan/schema.ts";
import { type Json, project, scanPieces } from "./helpers.ts";

const inner = obj({ tokensIn: num, tokensOut: num, tool: oneOf(["readFile"]), id: str(64) });
const schema = arr(obj({ say: str(64), text: embedded(inner) }));

const BS = "\\";
/** Request texts whose end is easy to get wrong; each also holds a fake `"tokensIn":999` ending. */
const REQUESTS: string[] = [
  `ends in a backslash ${BS}`,
  `${BS}${BS}"`, // the raw `\\\\\"` of the brief: two inner backslashes, then a quote
  `${BS}"`, // the raw `\\\"`
  ...[0, 1, 2, 3, 4, 5, 6].flatMap((r) => [`${BS.repeat(r)}"x`, `x${BS.repeat(r)}"`, `x${BS.repeat(r)}`]),
  '","tokensIn":999,"tool":"readFile","x":"',
  `\\",\\"tokensIn\\":999 ${BS}${BS}",${BS}"tokensIn${BS}":999`,
  "the escape \\u0022 and \\u005c spelled out, \\\\u0022",
  "é 😀 \u2028 \u001b[31mred\u001b[0m \u0000 \t\n\r line",
  "",
];

/** The outer string of `text`, its `"` and `\` spelled as `\"`/`\\` or as `\u0022`/`\u005c`/`\u005C`. */
function outer(text: string, unicode: number): string {
  let out = '"';
  let k = 0;
  for (const ch of text) {
    const u = (k++ * 7 + unicode) % 3 === 0 && unicode > 0;
    if (ch === '"') out += u ? "\\u0022" : '\\"';
    else if (ch === BS) out += u ? (k % 2 === 0 ? "\\u005c" : "\\u005C") : "\\\\";
    else out += JSON.stringify(ch).slice(1, -1);
  }
  return `${out}"`;
}

function documents(): { raw: string; value: Json }[] {
  const docs: { raw: string; value: Json }[] = [];
  for (const request of REQUESTS) {
    const texts = [
      JSON.stringify({ request, tokensIn: 5, tool: "readFile" }),
      JSON.stringify({ tokensIn: 6, request, tokensOut: 2 }),
      JSON.stringify({ meta: { [request]: request, k: [request] }, id: 'a\\"b', tokensOut: 3 }),
      JSON.stringify({ [request]: 1, tokensIn: 7 }),
    ];
    for (const text of texts) {
      for (const unicode of [0, 1, 2]) {
        const value: Json = [
          { say: "api_req_started", text },
          { say: "tool", text: '{"tool":"readFile"}' },
        ];
        const raw = `[{"say":"api_req_started","text":${outer(text, unicode)}},{"say":"tool","text":"{\\"tool\\":\\"readFile\\"}"}]`;
        docs.push({ raw, value });
      }
    }
  }
  return docs;
}

describe("skipped strings inside an embedded document", () => {
  it("end where JSON.parse twice says, for every piece size, skipper and spelling of the escapes", () => {
    const docs = documents();
    for (const { raw, value } of docs) {
      expect(JSON.parse(raw), raw).toEqual(value);
      const expected = project(schema, value);
      const buf = Buffer.from(raw);
      for (const sizes of [[1], [2], [3], [5], [7], [11], [buf.length]]) {
        for (const skipper of ["indexOf", "wasm"] as const) {
          expect(scanPieces(buf, schema, sizes, skipper), `${raw} sizes ${sizes} ${skipper}`).toEqual(
            expected,
          );
        }
      }
    }
  });

  it("find the closing quote by the backslash run (r % 4 === 1) and carry the parity across a cut", () => {
    const state: InnerSkip = { odd: false, cut: -1 };
    // Content `a\\\"b\\\\\"` then `,`: inner `a\"b\\` then the closing quote.
    const raw = Buffer.from('a\\\\\\"b\\\\\\\\\\",');
    expect(crossInnerString(raw, 0, raw.length, true, state)).toBe(raw.length - 1);
    // Cut inside the final run: the first piece ends in an odd inner run, carried to the next.
    const cutAt = raw.length - 4;
    const first = crossInnerString(raw, 0, cutAt, false, state);
    expect(first).toBe(-1);
    expect(state.odd).toBe(true);
    expect(state.cut).toBe(cutAt - 1);
    const rest = raw.subarray(state.cut);
    expect(crossInnerString(rest, 0, rest.length, true, state)).toBe(rest.length - 1);
    // A `\u0022` is an inner quote: it closes the string (exact walk), a `\\u0022` does not.
    const uni = Buffer.from("x\\\\u0022y\\u0022,");
    expect(crossInnerString(uni, 0, uni.length, true, { odd: false, cut: -1 })).toBe(uni.length - 1);
    // A string that never ends within the outer one: -1, the nested scan then reports not-json.
    const open = Buffer.from('x\\\\\\"');
    expect(crossInnerString(open, 0, open.length, true, { odd: false, cut: -1 })).toBe(-1);
  });
});
