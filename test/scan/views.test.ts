/**
 * `views` (src/scan/machine.ts MachineOptions, scanner.ts ScanFileOptions): a `raw` value and an
 * embedded text's `outer` raw value of a document read whole are views of the fed buffer, not copies,
 * with the same bytes as the copying scan; and the `\u0022`/`\u005c` search shared by the skipped
 * strings of one text (embedded-skip.ts `suspect`) still finds a quote spelled so in any of them.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { scanBuffer, scanFile } from "../../src/scan/scanner.ts";
import { arr, embedded, num, obj, type RawBytes, raw, str } from "../../src/scan/schema.ts";

const inner = obj({
  content: raw(1 << 20, { outer: true }),
  path: raw(1024, { outer: true }),
  tokensIn: num,
});
const schema = arr(obj({ say: str(64), cmd: raw(1024), text: embedded(inner) }));

const BS = "\\";
/** The outer string of `text` with its `"` and `\` spelled `\u0022`/`\u005c` from `from` on. */
function outer(text: string, from: number): string {
  let out = '"';
  let k = 0;
  for (const ch of text) {
    const u = k++ >= from;
    if (ch === '"') out += u ? "\\u0022" : '\\"';
    else if (ch === BS) out += u ? "\\u005c" : "\\\\";
    else out += JSON.stringify(ch).slice(1, -1);
  }
  return `${out}"`;
}

function bytesOf(r: RawBytes): string {
  return Buffer.from(r.buf.subarray(r.start, r.end)).toString("latin1");
}

function flat(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(flat);
  if (v !== null && typeof v === "object") {
    if (Buffer.isBuffer((v as RawBytes).buf))
      return { raw: bytesOf(v as RawBytes), depth: (v as RawBytes).depth };
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, flat(x)]));
  }
  return v;
}

const CONTENTS = ["plain", `x${BS}"y`, `${BS}${BS}"`, '","tokensIn":999,"x":"', "a\nb"];

describe("views of a document read whole", () => {
  it("give the bytes the copying scan gives, and point into the fed buffer", () => {
    for (const path of CONTENTS)
      for (const content of CONTENTS) {
        const text = JSON.stringify({ path, content, tokensIn: 7 });
        // Every spelling switch point: the shared search must find a `\u0022` in the path, the
        // content, or only after both.
        for (let from = 0; from <= text.length; from += 3) {
          const doc = Buffer.from(`[{"say":"tool","cmd":"git commit","text":${outer(text, from)}}]`);
          expect(JSON.parse(JSON.parse(doc.toString())[0].text)).toEqual({ path, content, tokensIn: 7 });
          const viewed = scanBuffer(doc, schema, { skipper: "indexOf", views: true });
          const copied = scanBuffer(doc, schema, { skipper: "indexOf" });
          expect(flat(viewed), doc.toString()).toEqual(flat(copied));
          const m = (viewed as { text: { tokensIn: number; content: RawBytes }; cmd: RawBytes }[])[0];
          expect(m?.text.tokensIn).toBe(7);
          expect(m?.cmd.buf).toBe(doc);
          const c = (copied as { cmd: RawBytes }[])[0];
          expect(c?.cmd.buf).not.toBe(doc);
        }
      }
  });

  it("scanFile: views only when asked, of the file's own buffer", async () => {
    const dir = mkdtempSync(join(tmpdir(), "scan-views-"));
    try {
      const f = join(dir, "doc.json");
      const text = JSON.stringify({ content: "a\nb", tokensIn: 1 });
      writeFileSync(f, JSON.stringify([{ say: "tool", cmd: "ls", text }]));
      const [v, c] = await Promise.all([scanFile(f, schema, { views: true }), scanFile(f, schema)]);
      expect(flat(v.value)).toEqual(flat(c.value));
      const vm = (v.value as { cmd: RawBytes; text: { content: RawBytes } }[])[0];
      const cm = (c.value as { cmd: RawBytes; text: { content: RawBytes } }[])[0];
      // One buffer holds both views (the file read whole); the copies are buffers of their own.
      expect(vm?.cmd.buf).toBe(vm?.text.content.buf);
      expect(cm?.cmd.buf).not.toBe(cm?.text.content.buf);
      expect(bytesOf(vm?.text.content as RawBytes)).toBe("a\\\\nb");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
