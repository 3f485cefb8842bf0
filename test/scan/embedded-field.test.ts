/**
 * A field of a JSON object held in a JSON string (src/scan/embedded-field.ts): found by its key among
 * keys and values built to mislead (a non-ASCII key only as a decoy: the names looked up are ASCII) (escaped quotes, look-alike keys, nested objects, the key's name
 * inside other strings), its string value handed on as a depth-2 text with the same lines as the
 * value itself, other values by kind; and textEquals.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { embeddedField, textEquals } from "../../src/scan/embedded-field.ts";
import { textLines } from "../../src/scan/lines.ts";
import { escaped } from "./escaped-helpers.ts";

const BS = "\\";
const KEYS = [
  "tool",
  "path",
  "content",
  "result",
  "success",
  'con"tent',
  `content${BS}`,
  "contents",
  "conten",
  "é",
];
const valueArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    "",
    "a\nb\n",
    `${BS}"content${BS}":"x"`,
    '","content":"fake',
    '{"content":"inner"}',
    "é😀\r\n",
    `${BS}`,
  ),
  fc.string(),
  fc.boolean(),
  fc.constant(null),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.dictionary(fc.constantFrom(...KEYS), fc.string(), { maxKeys: 3 }),
  fc.array(fc.string(), { maxLength: 3 }),
);

function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "boolean") return String(v);
  return typeof v === "object" ? "object" : typeof v;
}

describe("embeddedField", () => {
  it("finds every key of random objects, by kind, strings with their lines", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...KEYS), valueArb, { maxKeys: 6 }), (obj) => {
        const t = escaped(JSON.stringify(obj), 1);
        for (const key of KEYS.filter((k) => /^[\x20-\x7e]*$/.test(k))) {
          const got = embeddedField(t, key);
          if (!Object.hasOwn(obj, key)) {
            expect(got, key).toBeNull();
            continue;
          }
          const v = (obj as Record<string, unknown>)[key];
          expect(got?.kind, key).toBe(kindOf(v));
          if (got?.kind === "string") {
            const want = textLines(escaped(v as string, 2));
            const have = textLines(got.text);
            expect(Array.from(have.hashes)).toEqual(Array.from(want.hashes));
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it("a task-format edit message: tool, path and content", () => {
    const text = JSON.stringify({
      tool: "editedExistingFile",
      path: "src/a.ts",
      content: "------- SEARCH\nold\n=======\nnew\n+++++++ REPLACE\n",
      operationIsLocatedInWorkspace: true,
      startLineNumbers: [3],
    });
    const t = escaped(text, 1);
    const tool = embeddedField(t, "tool");
    expect(tool?.kind === "string" && textEquals(tool.text, "editedExistingFile")).toBe(true);
    expect(tool?.kind === "string" && textEquals(tool.text, "editedExisting")).toBe(false);
    expect(embeddedField(t, "content")?.kind).toBe("string");
    expect(embeddedField(t, "operationIsLocatedInWorkspace")?.kind).toBe("true");
    expect(embeddedField(t, "startLineNumbers")?.kind).toBe("array");
    expect(embeddedField(t, "missing")).toBeNull();
  });

  it("whitespace around the tokens, and malformed or non-object texts", () => {
    expect(embeddedField(escaped(' { "a" : 1 , "b" : "x" } ', 1), "b")?.kind).toBe("string");
    for (const s of ["", "[1]", '"x"', '{"a":', '{"a" 1}', '{"a":1 "b":2}', '{"b":"x', "not json"]) {
      expect(embeddedField(escaped(s, 1), "b"), s).toBeNull();
    }
    expect(embeddedField(escaped('{"b":1}', 2), "b")).toBeNull(); // a depth-3 value is not representable
  });
});

describe("textEquals", () => {
  it("compares the logical text", () => {
    expect(textEquals(escaped("a\nb", 1), "a\nb")).toBe(true);
    expect(textEquals(escaped("a\nb", 2), "a\nb")).toBe(true);
    expect(textEquals(escaped("a\\nb", 1), "a\nb")).toBe(false);
    expect(textEquals(escaped("ab", 1), "a")).toBe(false);
    expect(textEquals(escaped("", 1), "")).toBe(true);
  });
});
