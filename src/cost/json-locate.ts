/**
 * A strict JSON (RFC 8259) parser that keeps the source offset of every value and key, so a
 * price file's errors, syntactic or semantic, can name the line and column they are on.
 * JSON.parse cannot: it reports positions only for syntax errors, and not on every Node version.
 */

export type JsonNode =
  | { readonly kind: "object"; readonly offset: number; readonly entries: readonly JsonEntry[] }
  | { readonly kind: "array"; readonly offset: number; readonly items: readonly JsonNode[] }
  | { readonly kind: "string"; readonly offset: number; readonly value: string }
  | { readonly kind: "number"; readonly offset: number; readonly value: number }
  | { readonly kind: "boolean"; readonly offset: number; readonly value: boolean }
  | { readonly kind: "null"; readonly offset: number };

export interface JsonEntry {
  readonly key: string;
  readonly keyOffset: number;
  readonly value: JsonNode;
}

export class JsonSyntaxError extends Error {
  override readonly name = "JsonSyntaxError";
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

/** 1-based line and column (in UTF-16 code units) of an offset. */
export function lineColumn(text: string, offset: number): { readonly line: number; readonly column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line += 1;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

function describe(text: string, at: number): string {
  if (at >= text.length) return "end of input";
  return JSON.stringify(text[at]);
}

/** Parses `text` as one JSON value; throws JsonSyntaxError with the offending offset. */
export function parseJsonWithOffsets(text: string): JsonNode {
  let i = 0;
  const skipWs = (): void => {
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
      i += 1;
    }
  };
  const fail = (what: string, at = i): never => {
    throw new JsonSyntaxError(`${what}, found ${describe(text, at)}`, at);
  };
  const expect = (ch: string): void => {
    if (text[i] !== ch) fail(`expected ${JSON.stringify(ch)}`);
    i += 1;
  };

  const parseString = (): string => {
    expect('"');
    let out = "";
    for (;;) {
      if (i >= text.length) fail("unterminated string");
      const ch = text[i] as string;
      if (ch === '"') {
        i += 1;
        return out;
      }
      if (ch.charCodeAt(0) < 0x20) fail("control character in string");
      if (ch !== "\\") {
        out += ch;
        i += 1;
        continue;
      }
      const esc = text[i + 1];
      if (esc === "u") {
        const hex = text.slice(i + 2, i + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("invalid \\u escape", i);
        out += String.fromCharCode(Number.parseInt(hex, 16));
        i += 6;
        continue;
      }
      const mapped = esc === undefined ? undefined : ESCAPES[esc];
      if (mapped === undefined) fail("invalid escape", i);
      out += mapped;
      i += 2;
    }
  };

  const parseValue = (): JsonNode => {
    skipWs();
    const offset = i;
    const ch = text[i];
    if (ch === "{") {
      i += 1;
      const entries: JsonEntry[] = [];
      skipWs();
      if (text[i] === "}") {
        i += 1;
        return { kind: "object", offset, entries };
      }
      for (;;) {
        skipWs();
        const keyOffset = i;
        if (text[i] !== '"') fail("expected a property name in double quotes");
        const key = parseString();
        skipWs();
        expect(":");
        const value = parseValue();
        entries.push({ key, keyOffset, value });
        skipWs();
        if (text[i] === ",") {
          i += 1;
          continue;
        }
        if (text[i] === "}") {
          i += 1;
          return { kind: "object", offset, entries };
        }
        fail('expected "," or "}"');
      }
    }
    if (ch === "[") {
      i += 1;
      const items: JsonNode[] = [];
      skipWs();
      if (text[i] === "]") {
        i += 1;
        return { kind: "array", offset, items };
      }
      for (;;) {
        items.push(parseValue());
        skipWs();
        if (text[i] === ",") {
          i += 1;
          continue;
        }
        if (text[i] === "]") {
          i += 1;
          return { kind: "array", offset, items };
        }
        fail('expected "," or "]"');
      }
    }
    if (ch === '"') return { kind: "string", offset, value: parseString() };
    for (const [word, node] of [
      ["true", { kind: "boolean", offset, value: true }],
      ["false", { kind: "boolean", offset, value: false }],
      ["null", { kind: "null", offset }],
    ] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return node;
      }
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (m) {
      i += m[0].length;
      return { kind: "number", offset, value: Number(m[0]) };
    }
    return fail("expected a JSON value");
  };

  const root = parseValue();
  skipWs();
  if (i < text.length) fail("unexpected content after the JSON value");
  return root;
}
