/**
 * Fixed phrases matched in the raw bytes of a skipped string (src/scan/phrases.ts): directly
 * (depth 1) and inside an embedded text (depth 2, crossed raw by embedded-skip.ts), whatever the
 * chunk boundaries, next to escapes, and never as a JS string of the content.
 */
import { describe, expect, it } from "vitest";
import { MAX_PHRASE_HITS, PhraseScan } from "../../src/scan/phrases.ts";
import { arr, embedded, num, obj, phrases, raw } from "../../src/scan/schema.ts";
import { project, scanPieces } from "./helpers.ts";

const PHRASES = ["] Result:", "The user denied this operation", "Skipping tool due to"];
const requestSchema = arr(obj({ text: embedded(obj({ request: phrases(PHRASES), tokensIn: num })) }));
const directSchema = arr(obj({ request: phrases(PHRASES) }));

const request =
  "[write_to_file for 'a \"q\" \\\\ b.ts'] Result:\nThe user denied this operation. The file was not created.\n\n" +
  "[execute_command for 'echo \"] Result\"'] Result:\nCommand executed.\n\tSkipping tool due to user rejecting";

/** Where each phrase occurs in `raw`, as the scan must report it. */
function expected(raw: string): { phrase: number[]; at: number[]; truncated: boolean } {
  const b = Buffer.from(raw, "utf8");
  const hits: [number, number][] = [];
  PHRASES.forEach((p, id) => {
    for (let i = b.indexOf(p); i >= 0; i = b.indexOf(p, i + 1)) hits.push([id, i]);
  });
  hits.sort((x, y) => x[1] - y[1]);
  return { phrase: hits.map((h) => h[0]), at: hits.map((h) => h[1]), truncated: false };
}

describe("phrases(): matched in raw bytes", () => {
  const doc = JSON.stringify([{ text: JSON.stringify({ request, tokensIn: 7 }) }]);
  const rawInner = JSON.stringify(JSON.stringify(request)).slice(3, -3); // the request's raw bytes at depth 2

  it("finds every phrase of an embedded request in order, at its raw (depth 2) offset", () => {
    const out = scanPieces(Buffer.from(doc), requestSchema, [1 << 20], "indexOf") as {
      text: { request: unknown; tokensIn: number };
    }[];
    expect(out[0]?.text.tokensIn).toBe(7);
    const want = expected(rawInner);
    expect(want.phrase).toEqual([0, 1, 0, 2]);
    expect(out[0]?.text.request).toEqual(want);
  });

  it("gives the same hits for every cut of the document (phrases and escapes split across chunks)", () => {
    const want = scanPieces(Buffer.from(doc), requestSchema, [1 << 20], "indexOf");
    for (const size of [1, 2, 3, 5, 7, 11, 16, 31]) {
      for (const skipper of ["indexOf", "wasm"] as const) {
        expect(scanPieces(Buffer.from(doc), requestSchema, [size, size + 3], skipper)).toEqual(want);
      }
    }
  });

  it("matches a depth-1 string as the JSON.stringify reference says, in any pieces", () => {
    const d = JSON.stringify([{ request }, { request: 3 }, { request: "no match here" }]);
    const want = project(directSchema, JSON.parse(d));
    for (const size of [1, 4, 9, 64])
      for (const skipper of ["indexOf", "wasm"] as const)
        expect(scanPieces(Buffer.from(d), directSchema, [size], skipper)).toEqual(want);
  });

  it("finds no phrase broken by an escape (a phrase spelled with \\u escapes is not the phrase)", () => {
    const d = '[{"request": "The user \\u0064enied this operation"}]';
    expect(scanPieces(Buffer.from(d), directSchema, [3], "indexOf")).toEqual([
      { request: { phrase: [], at: [], truncated: false } },
    ]);
  });

  it("refuses a phrase that a JSON writer would escape or that could be read as an escape's tail", () => {
    expect(() => phrases(['say "x"'])).toThrow(RangeError);
    expect(() => phrases(["a\\b"])).toThrow(RangeError);
    expect(() => phrases(["tool"])).toThrow(RangeError);
    expect(() => phrases(["line\n"])).toThrow(RangeError);
  });
});

describe("PhraseScan", () => {
  const needles = PHRASES.map((p) => Buffer.from(p));

  it("finds a phrase cut at every position across two and three pieces", () => {
    const text = Buffer.from(`xx${PHRASES[1]}yy`);
    for (let i = 1; i < text.length; i++) {
      for (let j = i; j < text.length; j++) {
        const s = new PhraseScan(needles);
        s.feed(text, 0, i);
        s.feed(text, i, j);
        s.feed(text, j, text.length);
        expect(s.end()).toEqual({ phrase: [1], at: [2], truncated: false });
      }
    }
  });

  it("does not report a phrase twice when it ends exactly at a boundary", () => {
    const text = Buffer.from(`${PHRASES[0]}${PHRASES[0]}`);
    const s = new PhraseScan(needles);
    s.feed(text, 0, PHRASES[0]?.length ?? 0);
    s.feed(text, PHRASES[0]?.length ?? 0, text.length);
    expect(s.end().at).toEqual([0, PHRASES[0]?.length]);
  });

  it("keeps at most MAX_PHRASE_HITS hits and says so", () => {
    const text = Buffer.from(PHRASES[0]?.repeat(MAX_PHRASE_HITS + 5) ?? "");
    const s = new PhraseScan(needles);
    s.feed(text, 0, text.length);
    const out = s.end();
    expect(out.at.length).toBe(MAX_PHRASE_HITS);
    expect(out.truncated).toBe(true);
  });
});

describe("raw() inside an embedded text: the bytes escaped once", () => {
  const schema = arr(obj({ text: embedded(obj({ content: raw(64) })) }));

  it("hands over the content's escaped bytes (depth 1 inside the embedded text), in any pieces", () => {
    const content = 'line "1"\n\tline \\2\n';
    const doc = JSON.stringify([
      { text: JSON.stringify({ content }) },
      { text: JSON.stringify({ content: "x".repeat(65) }) },
    ]);
    const want = Buffer.from(JSON.stringify(content).slice(1, -1));
    for (const size of [1, 3, 8, 1 << 16]) {
      const out = scanPieces(Buffer.from(doc), schema, [size], "indexOf") as {
        text: Record<string, unknown>;
      }[];
      const t = out[0]?.text.content as { buf: Uint8Array; start: number; end: number; truncated: boolean };
      expect(Buffer.from(t.buf.subarray(t.start, t.end))).toEqual(want);
      expect(t.truncated).toBe(false);
      expect(out[1]?.text.content).toEqual({ wrongType: "too-long" });
    }
  });
});
