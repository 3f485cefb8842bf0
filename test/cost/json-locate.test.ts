import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type JsonNode,
  JsonSyntaxError,
  lineColumn,
  parseJsonWithOffsets,
} from "../../src/cost/json-locate.ts";

function plain(n: JsonNode): unknown {
  switch (n.kind) {
    case "object":
      return Object.fromEntries(n.entries.map((e) => [e.key, plain(e.value)]));
    case "array":
      return n.items.map(plain);
    case "null":
      return null;
    default:
      return n.value;
  }
}

function syntaxError(text: string): JsonSyntaxError {
  try {
    parseJsonWithOffsets(text);
  } catch (err) {
    if (err instanceof JsonSyntaxError) return err;
    throw err;
  }
  throw new Error(`accepted: ${text}`);
}

describe("parseJsonWithOffsets", () => {
  it("agrees with JSON.parse on any JSON value, however formatted", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(undefined, 2, "\t"), (v, indent) => {
        const text = JSON.stringify(v, null, indent);
        expect(plain(parseJsonWithOffsets(text))).toEqual(JSON.parse(text));
      }),
    );
  });

  it("decodes every escape", () => {
    const text = String.raw`"a\"b\\c\/d\be\ff\ng\rh\ti\u00e9\ud83d\ude00"`;
    expect(plain(parseJsonWithOffsets(text))).toBe(JSON.parse(text));
  });

  it("records the offset of values and keys", () => {
    const text = '{\n  "k": [1, "x"]\n}';
    const root = parseJsonWithOffsets(text);
    if (root.kind !== "object") throw new Error("object expected");
    const entry = root.entries[0];
    expect(entry?.keyOffset).toBe(text.indexOf('"k"'));
    expect(entry?.value.offset).toBe(text.indexOf("["));
    if (entry?.value.kind !== "array") throw new Error("array expected");
    expect(entry.value.items[1]?.offset).toBe(text.indexOf('"x"'));
  });

  it("rejects what JSON.parse rejects, at the offending offset", () => {
    const cases: [string, number][] = [
      ['{"a": 1,}', 8],
      ["[1 2]", 3],
      ["{'a': 1}", 1],
      ['{"a" 1}', 5],
      ["01", 1],
      ["", 0],
      ['"abc', 4],
      ['"a\\x"', 2],
      ['"\t"', 1],
      ["tru", 0],
      ["NaN", 0],
      ["[1,]", 3],
      ['{"a":1} x', 8],
    ];
    for (const [text, offset] of cases) {
      expect(() => JSON.parse(text), text).toThrow();
      expect(syntaxError(text).offset, text).toBe(offset);
    }
  });
});

describe("lineColumn", () => {
  it("is 1-based and counts lines by LF", () => {
    const text = "ab\ncd\r\nef";
    expect(lineColumn(text, 0)).toEqual({ line: 1, column: 1 });
    expect(lineColumn(text, 2)).toEqual({ line: 1, column: 3 });
    expect(lineColumn(text, 3)).toEqual({ line: 2, column: 1 });
    expect(lineColumn(text, 8)).toEqual({ line: 3, column: 2 });
  });
});
