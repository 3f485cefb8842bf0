/**
 * The `raw` kind (a string's raw, still-escaped bytes copied out, never decoded) and the `shape`
 * kind (the schema of the shape met: Cline CLI 3.x's tool_result.content is an array for most
 * tools, a JSON string for others), at every chunk boundary and inside an embedded string.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { scanBuffer, scanFile } from "../../src/scan/scanner.ts";
import {
  arr,
  bool,
  embedded,
  isWrongType,
  obj,
  type RawBytes,
  raw,
  shape,
  str,
} from "../../src/scan/schema.ts";

const dir = mkdtempSync(join(tmpdir(), "raw-shape-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bytesOf = (v: unknown): string => {
  if (isWrongType(v)) return `wrong:${v.wrongType}`;
  const r = v as RawBytes;
  return Buffer.from(r.buf.subarray(r.start, r.end)).toString("latin1");
};

const block = obj({
  name: str(64),
  text: raw(64),
  content: shape({
    string: embedded(obj({ success: bool, error: raw(256) })),
    array: arr(obj({ success: bool, error: raw(256) })),
  }),
});
const doc = obj({ blocks: arr(block) });

const TEXT = JSON.stringify({
  blocks: [
    {
      name: "editor",
      text: 'a\nb "q" \\ é',
      content: JSON.stringify({ query: "x", result: "", error: 'Tool "editor" said\nno' }),
    },
    {
      name: "run_commands",
      text: "",
      content: [{ query: "exit 3", result: "r", success: false, error: "exit 3" }],
    },
    { name: "long", text: "x".repeat(65), content: { success: true } },
    { name: "num", text: 7, content: 12 },
  ],
});

type Out = { name?: unknown; text?: unknown; content?: unknown }[];
function summary(v: unknown) {
  return ((v as { blocks: Out }).blocks ?? []).map((b) => {
    const c = b.content;
    let content: unknown;
    if (isWrongType(c)) content = `wrong:${c.wrongType}`;
    else if (Array.isArray(c))
      content = c.map((e: { success?: unknown; error?: unknown }) => [e.success, bytesOf(e.error)]);
    else {
      const o = c as { success?: unknown; error?: unknown };
      content = [o.success, o.error === undefined ? undefined : bytesOf(o.error)];
    }
    return [b.name, bytesOf(b.text), content];
  });
}

const EXPECTED = [
  // Raw bytes, escapes kept (`\n`, `\"`, `\\`; UTF-8 as written); inside the embedded string the
  // inner document's bytes (unescaped once by the nested scan, the inner escapes kept).
  ["editor", 'a\\nb \\"q\\" \\\\ \u00c3\u00a9', [undefined, 'Tool \\"editor\\" said\\nno']],
  ["run_commands", "", [[false, "exit 3"]]],
  ["long", "wrong:too-long", "wrong:object"],
  ["num", "wrong:number", "wrong:number"],
];

describe("raw and shape", () => {
  it("scanBuffer: raw bytes copied, escapes kept; the shape met decides the schema", () => {
    expect(summary(scanBuffer(Buffer.from(TEXT), doc))).toEqual(EXPECTED);
  });

  it("scanFile at every chunk size from 1 byte: the same values (a raw string across chunks)", async () => {
    const path = join(dir, "doc.json");
    writeFileSync(path, TEXT);
    for (const skipper of ["indexOf", "wasm"] as const)
      for (const chunkBytes of [1, 2, 3, 5, 7, 16, 64, 1000]) {
        const r = await scanFile(path, doc, { chunkBytes, skipper });
        expect(summary(r.value), `${skipper}, chunk ${chunkBytes}`).toEqual(EXPECTED);
      }
  });

  it("a raw value is a copy: changing the scanned buffer afterwards changes nothing", () => {
    const buf = Buffer.from(TEXT);
    const v = scanBuffer(buf, doc);
    buf.fill(0x20);
    expect(summary(v)).toEqual(EXPECTED);
  });
});

describe("raw prefix", () => {
  const schema = obj({ a: raw(8, { prefix: true }), b: raw(8, { prefix: true }) });
  const text = JSON.stringify({ a: "File created successfully at: /x", b: "short" });

  it("a longer string gives its first bytes, marked truncated; a short one whole", async () => {
    const want = { a: ["File cre", true], b: ["short", false] };
    const show = (v: unknown) => {
      const o = v as { a: RawBytes; b: RawBytes };
      return { a: [bytesOf(o.a), o.a.truncated], b: [bytesOf(o.b), o.b.truncated] };
    };
    expect(show(scanBuffer(Buffer.from(text), schema))).toEqual(want);
    const path = join(dir, "prefix.json");
    writeFileSync(path, text);
    for (const chunkBytes of [1, 3, 9, 12, 100]) {
      expect(show((await scanFile(path, schema, { chunkBytes, skipper: "indexOf" })).value)).toEqual(want);
    }
  });
});
