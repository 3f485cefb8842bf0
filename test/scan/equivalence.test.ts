import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { messagesSchema, prng, writeMessagesDoc } from "../../bench/lib/messages-doc.ts";
import { scanBuffer, scanFile } from "../../src/scan/scanner.ts";
import { arr, bool, isWrongType, num, obj, type Schema, str } from "../../src/scan/schema.ts";
import { type Json, noisyStringify, project, scanPieces } from "./helpers.ts";

/** The messages allow-list with a chosen string limit (huge = never too-long, for re-escaped text). */
function msgSchema(maxBytes: number) {
  return obj({
    version: num,
    sessionId: str(maxBytes),
    agent: str(maxBytes),
    messages: arr(
      obj({
        id: str(maxBytes),
        role: str(maxBytes),
        ts: num,
        modelInfo: obj({ id: str(maxBytes), provider: str(maxBytes) }),
        metrics: obj({
          inputTokens: num,
          outputTokens: num,
          cacheReadTokens: num,
          cacheWriteTokens: num,
          cost: num,
        }),
        content: arr(
          obj({
            type: str(maxBytes),
            id: str(maxBytes),
            name: str(maxBytes),
            tool_use_id: str(maxBytes),
            is_error: bool,
          }),
        ),
      }),
    ),
  });
}

const generic = obj({
  s: str(),
  n: num,
  a: arr(num),
  aa: arr(arr(str(8))),
  o: obj({ x: num, y: str(4) }),
  ao: arr(obj({ k: str(), v: num })),
  b: bool,
  ab: arr(bool),
  "\u{1f600}": str(),
  'i"d': str(),
  ["__proto__"]: num,
});

/** A messages document as cline@3.0.65 writes it (the shape of docs/cline-format.md §4). */
const SCHEMA_EXAMPLE = `{
  "version": 1,
  "updated_at": "2026-11-30T05:56:40.728Z",
  "agent": "lead",
  "sessionId": "1796018200459_9svp0",
  "origin": { "source": "cli", "mode": "user",
              "sessionId": "…", "version": "3.0.65" },
  "messages": [
    { "id": "df79ce55-…", "role": "user", "ts": 1796018200520,
      "content": [ { "type": "text", "text": "<user_input mode=\\"act\\">Inspect … [[mock:a]]</user_input>" } ] },
    { "id": "msg_8Zq37Jxd", "role": "assistant", "ts": 1796018200592,
      "content": [ { "type": "thinking", "thinking": "Plan: …" },
                   { "type": "text", "text": "Listing files. [r1]" },
                   { "type": "tool_use", "id": "toolu_mock_1_0", "name": "run_commands",
                     "input": { "commands": ["ls -1 <WORK>/ws"] } } ],
      "modelInfo": { "id": "claude-sonnet-4-5-20250929", "provider": "anthropic", "family": "claude-sonnet" },
      "metrics": { "inputTokens": 840, "outputTokens": 313, "cacheReadTokens": 0, "cacheWriteTokens": 719,
                   "cost": 0.00775425 } },
    { "id": "msg_Xa2zOv0t", "role": "user", "ts": 1796018200614,
      "content": [ { "type": "tool_result", "tool_use_id": "toolu_mock_1_0", "name": "run_commands",
                     "content": [ { "query": "ls -1 …", "result": "data.csv\\nnotes.txt\\n", "success": true } ] } ] }
  ],
  "system_prompt": "You are Cline, an AI coding agent. …"
}`;

/** Hand-written documents: [name, text, schema]. All are valid JSON, so JSON.parse is the reference. */
const TABLE: readonly [string, string, Schema][] = [
  ["schema.md example", SCHEMA_EXAMPLE, messagesSchema],
  ["schema.md example, generic schema", SCHEMA_EXAMPLE, generic],
  [
    "escapes in decoded strings",
    String.raw`{"sessionId":"a\"b\\c\/d\b\f\n\r\t\u0041\u00e9\u4E2D\ud83d\ude00","agent":"\ud800x\udc00","version":1}`,
    messagesSchema,
  ],
  [
    "raw unicode",
    '{"sessionId":"é中😀 ok","agent":"\u00ff","messages":[{"id":"😀","text":"中文 é"}]}',
    messagesSchema,
  ],
  [
    "nested arrays",
    '{"aa":[["a","b"],[],["c",1,null,["x"],{"y":1}],"s",7],"a":[1,[2],{"x":3},"4",true,false,null,-5]}',
    generic,
  ],
  [
    "numbers of all forms",
    '{"a":[0,-0,1,-1,1.5,-1.25E-3,1e10,1E10,1e+10,1e-10,1E-10,123456789012345678901234567890,1e400,-1e400,5e-324,2e-400,0.1,9007199254740993,0e0,-0.0]}',
    generic,
  ],
  ["numbers as scalars", '{"n":-0.5e-2,"o":{"x":12345678901234567890}}', generic],
  ["empty object", "{}", messagesSchema],
  ["empty containers", '{"messages":[],"a":[],"o":{},"aa":[[]],"ao":[{}]}', generic],
  ["messages with empty object", '{"messages":[{},{"content":[]},{"content":[{}]}]}', messagesSchema],
  [
    "wrong types everywhere",
    '{"version":"1","sessionId":2,"agent":null,"messages":[1,"m",null,true,[],{"id":{},"role":[],"ts":"1","modelInfo":"x","metrics":[1],"content":{"type":"text"}},{"metrics":{"inputTokens":"12","outputTokens":true,"cacheReadTokens":null,"cacheWriteTokens":{},"cost":[]}}]}',
    messagesSchema,
  ],
  ["top level array for an object schema", '[{"version":1}]', messagesSchema],
  ["top level string", '"x"', messagesSchema],
  ["top level number", " 12 ", messagesSchema],
  ["top level literal", "false", generic],
  ["duplicate keys: last wins", '{"s":"a","s":"b","o":{"x":1},"o":"gone","n":1,"n":2}', generic],
  ["duplicate keys: object after wrong type", '{"o":"x","o":{"y":"ab"}}', generic],
  [
    "escaped keys",
    String.raw`{"\u0073":"via escape","\ud83d\ude00":"emoji key","i\"d":"quote key","o":{"\u0078":5,"x\u0000":6},"\u006e":3,"s\u0000":"no"}`,
    generic,
  ],
  [
    "unknown keys of all kinds",
    '{"zz":{"a":[1,{"b":"c"}]},"s":"ok","yy":[[[]]],"xx":"\\"","ww":-1e5,"vv":null}',
    generic,
  ],
  ["__proto__ field is an own property", '{"__proto__":5,"s":"x"}', generic],
  [
    "string limit",
    '{"aa":[["12345678","123456789","\\"\\"\\"\\"","\\"\\"\\"\\"\\"","\\u0041","éééé","ééééé"]]}',
    generic,
  ],
  ["string limit in objects", '{"o":{"y":"abcd"},"ao":[{"k":"x"}]}', generic],
  ["string limit exceeded", '{"o":{"y":"abcde"}}', generic],
  [
    "booleans: decoded where allow-listed, wrong type elsewhere",
    '{"b":true,"ab":[true,false,null,1,"true",[],{}],"n":false,"s":true,"o":{"x":false}}',
    generic,
  ],
  ["boolean false and a skipped boolean", '{"b":false,"zz":[true,false],"ab":[]}', generic],
  [
    "tool_result flags",
    '{"messages":[{"role":"user","ts":5,"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"x"},{"type":"tool_result","tool_use_id":"t2","is_error":"yes"}]}]}',
    messagesSchema,
  ],
  ["whitespace everywhere", ' \t\r\n{ \n"s" \t: \r"x" ,\n"a"\n:\n[ 1 ,\t2 ]\n,"o":{ } } \n\t ', generic],
];

const SIZES: readonly (readonly number[])[] = [[1], [2], [3], [7], [64], [5, 1, 13], [1 << 20]];

let dir = "";
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "scan-eq-"));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Every way of running the engine must give the reference projection. */
async function checkAllWays(
  text: string | Buffer,
  schema: Schema,
  expected: unknown,
  files = true,
): Promise<void> {
  const buf = typeof text === "string" ? Buffer.from(text) : text;
  expect(scanBuffer(buf, schema)).toEqual(expected);
  expect(scanBuffer(buf, schema, { skipper: "wasm" })).toEqual(expected);
  expect(scanBuffer(buf, schema, { skipper: "indexOf" })).toEqual(expected);
  expect(scanBuffer(new Uint8Array(buf), schema)).toEqual(expected);
  for (const sizes of SIZES) {
    expect(scanPieces(buf, schema, sizes, "wasm")).toEqual(expected);
    expect(scanPieces(buf, schema, sizes, "indexOf")).toEqual(expected);
  }
  if (!files) return;
  const path = join(dir, "doc.json");
  writeFileSync(path, buf);
  for (const chunkBytes of [1, 2, 3, 7, 64]) {
    for (const skipper of ["wasm", "indexOf"] as const) {
      const res = await scanFile(path, schema, { chunkBytes, skipper });
      expect(res.value).toEqual(expected);
      expect(res.bytesRead).toBe(buf.length);
    }
  }
}

describe("scanner equals JSON.parse + allow-list projection", () => {
  for (const [name, text, schema] of TABLE) {
    it(name, async () => {
      await checkAllWays(text, schema, project(schema, JSON.parse(text)));
    });
  }

  it("spot checks the reference itself (the table must not be vacuous)", () => {
    const v = scanBuffer(Buffer.from(SCHEMA_EXAMPLE), messagesSchema) as Record<string, unknown>;
    expect(v).toEqual({
      version: 1,
      agent: "lead",
      sessionId: "1796018200459_9svp0",
      messages: [
        { id: "df79ce55-…", role: "user", ts: 1796018200520, content: [{ type: "text" }] },
        {
          id: "msg_8Zq37Jxd",
          role: "assistant",
          ts: 1796018200592,
          content: [
            { type: "thinking" },
            { type: "text" },
            // input is an object: its edit fields (none here) and its command lines as raw bytes
            // (commits and pull requests: src/scan/command-kinds.ts), never decoded by the scanner.
            {
              type: "tool_use",
              id: "toolu_mock_1_0",
              name: "run_commands",
              input: { commands: [{ rawText: "ls -1 <WORK>/ws" }] },
            },
          ],
          modelInfo: { id: "claude-sonnet-4-5-20250929", provider: "anthropic" },
          metrics: {
            inputTokens: 840,
            outputTokens: 313,
            cacheReadTokens: 0,
            cacheWriteTokens: 719,
            cost: 0.00775425,
          },
        },
        {
          id: "msg_Xa2zOv0t",
          role: "user",
          ts: 1796018200614,
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_mock_1_0",
              name: "run_commands",
              // The result's JSON (an array here): its success flag only; no text is copied.
              content: [{ success: true }],
            },
          ],
        },
      ],
    });
    const g = scanBuffer(Buffer.from('{"__proto__":5,"o":{"y":"abcde"},"a":[-0,1e400]}'), generic) as Record<
      string,
      unknown
    >;
    expect(Object.getPrototypeOf(g)).toBe(Object.prototype);
    expect(Object.hasOwn(g, "__proto__")).toBe(true);
    expect(isWrongType((g.o as Record<string, unknown>).y)).toBe(true);
    expect(Object.is((g.a as number[])[0], -0)).toBe(true);
    expect((g.a as number[])[1]).toBe(Number.POSITIVE_INFINITY);
  });

  it("counts string limits in raw bytes, escapes included", () => {
    const s = obj({ v: str(5) });
    expect(scanBuffer(Buffer.from('{"v":"\\u0041"}'), s)).toEqual({ v: { wrongType: "too-long" } });
    expect(scanBuffer(Buffer.from('{"v":"\\u0041"}'), obj({ v: str(6) }))).toEqual({ v: "A" });
    expect(scanBuffer(Buffer.from('{"v":"ab\\"c"}'), s)).toEqual({ v: 'ab"c' });
    expect(scanBuffer(Buffer.from('{"v":""}'), obj({ v: str(0) }))).toEqual({ v: "" });
    expect(scanBuffer(Buffer.from('{"v":"a"}'), obj({ v: str(0) }))).toEqual({
      v: { wrongType: "too-long" },
    });
  });

  it("decodes invalid UTF-8 in allow-listed strings as U+FFFD, like JSON.parse of the decoded text", async () => {
    const buf = Buffer.concat([
      Buffer.from('{"s":"a'),
      Buffer.from([0xff, 0xc3, 0x28, 0xe2, 0x82]),
      Buffer.from('\\n","zz":"'),
      Buffer.from([0xed, 0xa0, 0x80, 0x00]),
      Buffer.from('","aa":[["'),
      Buffer.from([0xf0, 0x9f, 0x98]),
      Buffer.from('"]]}'),
    ]);
    const expected = { s: "a\ufffd\ufffd(\ufffd\n", aa: [["\ufffd"]] };
    await checkAllWays(buf, generic, expected);
  });

  it("tolerates NUL and raw control bytes inside skipped strings, rejects them in decoded ones", () => {
    const skipped = Buffer.from('{"zz":"a\u0000b\u0001\nc","s":"ok"}');
    expect(scanBuffer(skipped, generic)).toEqual({ s: "ok" });
    expect(scanPieces(skipped, generic, [1], "wasm")).toEqual({ s: "ok" });
    expect(() => scanBuffer(Buffer.from('{"s":"a\u0001"}'), generic)).toThrow(/syntax/);
    expect(() => scanBuffer(Buffer.from('{"s":"a\\x"}'), generic)).toThrow(/syntax/);
    expect(() => scanBuffer(Buffer.from('{"s":"a\\u12G4"}'), generic)).toThrow(/syntax/);
  });

  it("matches random generated message documents, canonical and noisy", async () => {
    const rand = prng(42);
    const words = ["a", "é", "中", "😀", '"', "\\", "\n", "\u0000", "/", "\ud800", "msg_x", "tool_use"];
    const s = (n: number): string =>
      Array.from({ length: n }, () => words[Math.floor(rand() * words.length)]).join("");
    const anyValue = (d: number): Json => {
      const r = rand();
      if (d > 3 || r < 0.2) return s(Math.floor(rand() * 8));
      if (r < 0.35) return Math.floor(rand() * 1e6) / (rand() < 0.5 ? 1 : 1000);
      if (r < 0.45) return [true, false, null][Math.floor(rand() * 3)] as Json;
      if (r < 0.7) return Array.from({ length: Math.floor(rand() * 4) }, () => anyValue(d + 1));
      const o: Record<string, Json> = {};
      for (let i = Math.floor(rand() * 4); i > 0; i--) o[s(2)] = anyValue(d + 1);
      if (rand() < 0.5) o.type = s(3);
      return o;
    };
    for (let docN = 0; docN < 40; docN++) {
      const messages: Json[] = [];
      for (let m = Math.floor(rand() * 5); m > 0; m--) {
        messages.push({
          id: rand() < 0.9 ? `msg_${s(4)}` : anyValue(2),
          role: rand() < 0.5 ? "user" : "assistant",
          ts: 1796018200000 + Math.floor(rand() * 1e6),
          content: Array.from({ length: Math.floor(rand() * 4) }, () =>
            rand() < 0.8
              ? { type: "tool_use", id: s(3), name: s(3), input: anyValue(1), text: s(20) }
              : anyValue(1),
          ),
          ...(rand() < 0.5
            ? {
                metrics: {
                  inputTokens: Math.floor(rand() * 1e6),
                  outputTokens: rand() < 0.9 ? Math.floor(rand() * 1e4) : anyValue(2),
                  cacheReadTokens: 0,
                  cacheWriteTokens: 1,
                  cost: rand() / 100,
                },
              }
            : {}),
          ...(rand() < 0.3 ? { modelInfo: { id: s(5), provider: s(2), family: anyValue(2) } } : {}),
          ...(rand() < 0.2 ? { metadata: anyValue(1) } : {}),
        });
      }
      const doc: Json = { version: 1, agent: s(3), sessionId: s(6), messages, system_prompt: s(30) };
      for (const text of [JSON.stringify(doc), JSON.stringify(doc, null, 2)]) {
        await checkAllWays(text, messagesSchema, project(messagesSchema, JSON.parse(text)), docN < 2);
      }
      const wide = msgSchema(1e9);
      const noisy = noisyStringify(doc, { rand, ws: 0.3, escape: 0.2, numbers: true });
      await checkAllWays(noisy, wide, project(wide, JSON.parse(noisy)), docN < 2);
    }
  });

  it("matches a realistic generated document with long escaped bodies, in any chunking", async () => {
    const path = join(dir, "realistic.messages.json");
    writeMessagesDoc(path, { turns: 40, toolResultChars: (t) => (t % 10 === 0 ? 150_000 : 4_000), seed: 3 });
    const buf = readFileSync(path);
    const expected = project(messagesSchema, JSON.parse(buf.toString("utf8")));
    expect(((expected as { messages: unknown[] }).messages ?? []).length).toBe(81);
    for (const sizes of [[4096], [65_539], [1 << 20], [100_003, 17, 64]]) {
      expect(scanPieces(buf, messagesSchema, sizes, "wasm")).toEqual(expected);
      expect(scanPieces(buf, messagesSchema, sizes, "indexOf")).toEqual(expected);
    }
    for (const chunkBytes of [4093, 1 << 16, 1 << 21]) {
      expect((await scanFile(path, messagesSchema, { chunkBytes })).value).toEqual(expected);
      expect((await scanFile(path, messagesSchema, { chunkBytes, skipper: "indexOf" })).value).toEqual(
        expected,
      );
    }
  });

  it("property: arbitrary JSON values embedded in the message document shape", () => {
    const wide = msgSchema(1e9);
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), fc.jsonValue(), fc.integer(), (a, b, c, seed) => {
        const doc = {
          version: 1,
          agent: a,
          sessionId: "1796018200459_9svp0",
          messages: [
            {
              id: b,
              role: "assistant",
              ts: c,
              content: [{ type: "text", text: a }, c, { type: b, id: c, name: "run_commands", input: a }],
              metrics: { inputTokens: c, outputTokens: 2, cacheReadTokens: b, extra: a },
              modelInfo: a,
            },
            c,
            { id: "m", content: b, metrics: a },
          ],
          system_prompt: b,
        } as Json;
        const rand = prng(seed);
        for (const text of [JSON.stringify(doc), JSON.stringify(doc, null, 2)]) {
          const expected = project(messagesSchema, JSON.parse(text));
          const buf = Buffer.from(text);
          expect(scanBuffer(buf, messagesSchema, { skipper: "indexOf" })).toEqual(expected);
          expect(scanPieces(buf, messagesSchema, [1 + (Math.abs(seed) % 9)], "wasm")).toEqual(expected);
        }
        const noisy = noisyStringify(doc, { rand, ws: 0.3, escape: 0.3, numbers: true });
        const expected = project(wide, JSON.parse(noisy));
        const buf = Buffer.from(noisy);
        expect(scanBuffer(buf, wide, { skipper: "wasm" })).toEqual(expected);
        expect(scanPieces(buf, wide, [1, 2, 3, 7], "indexOf")).toEqual(expected);
      }),
      { numRuns: 300, seed: 20261130 },
    );
  });
});
