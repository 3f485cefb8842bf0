/**
 * Lines of an escaped text (src/scan/lines.ts) against the decoded text, and numstat
 * (src/scan/numstat.ts) against the real `git diff --numstat`, at depth 1 and 2, over texts built
 * from the escaping traps: CRLF, no final newline, empty texts, unicode, backslashes, quotes, a
 * literal `\n` in the text, `\u` look-alikes.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { cursorOf, decodeToken, type EscapedText, simpleToken } from "../../src/scan/escaped-text.ts";
import {
  forEachHashedLine,
  forEachLine,
  hashLine,
  hashLines,
  LinesBuilder,
  lineCount,
  newlineCount,
  textLines,
} from "../../src/scan/lines.ts";
import { DiffScratch, numstat, numstatOf } from "../../src/scan/numstat.ts";
import { escaped, gitNumstatMany, tempDir } from "./escaped-helpers.ts";

const BS = "\\";
/** Line contents chosen to collide with escapes and with each other. */
const TRAPS = [
  "",
  "a",
  "b",
  "a\r",
  `${BS}n`,
  `${BS}${BS}n`,
  BS,
  `${BS}${BS}`,
  '"',
  `${BS}"`,
  `"${BS}n"`,
  "é",
  "😀 x",
  "\u2028",
  "\t\tindent",
  "\u001b[31m",
  `${BS}u000a`,
  `${BS}u005c`,
  "const x = 1;",
  "}",
];

const lineArb = fc.oneof(
  fc.constantFrom(...TRAPS),
  fc.string({ maxLength: 6 }).filter((s) => !s.includes("\n")),
);
const textArb = fc
  .tuple(
    fc.array(lineArb, { maxLength: 14 }),
    fc.constantFrom("\n", "\r\n"),
    fc.boolean(), // a final newline
  )
  .map(([lines, nl, final]) => (lines.length === 0 ? "" : lines.join(nl) + (final ? nl : "")))
  .filter(
    (s) => !s.includes("\0") && !/[\ud800-\udfff]/.test(s.replace(/[\ud800-\udbff][\udc00-\udfff]/g, "")),
  );

/** forEachHashedLine's line ranges (start, end, ...), each line's hashes checked against hashLine's byte steps. */
function hashedRanges(t: EscapedText): number[] {
  const ranges: number[] = [];
  forEachHashedLine(t, (a, b, _esc, h1, h2) => {
    const out = new LinesBuilder();
    hashLine(t, a, b, out, true);
    expect([h1 >>> 0, h2 >>> 0]).toEqual(Array.from(out.build().hashes));
    ranges.push(a, b);
    return true;
  });
  return ranges;
}

/** The rule on the decoded text: newlines, plus one when non-empty and not ending in one. */
function expectedCount(s: string): number {
  const nl = s.split("\n").length - 1;
  return s.length > 0 && !s.endsWith("\n") ? nl + 1 : nl;
}

describe("lines of an escaped text", () => {
  for (const depth of [1, 2] as const) {
    it(`counts as the decoded text does (depth ${depth})`, () => {
      fc.assert(
        fc.property(fc.oneof(textArb, fc.string(), fc.string({ unit: "binary" })), (s) => {
          const t = escaped(s, depth);
          expect(lineCount(t)).toBe(expectedCount(s));
          expect(textLines(t).count).toBe(expectedCount(s));
        }),
        { numRuns: 400 },
      );
    });

    it(`every trap alone and in pairs (depth ${depth})`, () => {
      for (const a of TRAPS) {
        for (const b of TRAPS) {
          for (const s of [a, `${a}\n${b}`, `${a}${b}\n`, `${a}\r\n${b}`]) {
            expect(lineCount(escaped(s, depth))).toBe(expectedCount(s));
          }
        }
      }
    });

    it(`equal lines hash equal, different lines differ (depth ${depth})`, () => {
      const s = TRAPS.join("\n");
      const l = textLines(escaped(`${s}\n${s}\n`, depth));
      const n = TRAPS.length;
      const key = (i: number) => `${l.hashes[2 * i]}:${l.hashes[2 * i + 1]}`;
      for (let i = 0; i < n; i++) {
        expect(key(i)).toBe(key(i + n));
        for (let j = 0; j < i; j++) expect(key(i)).not.toBe(key(j));
      }
    });

    it(`forEachLine gives token-boundary ranges whose lines count one each (depth ${depth})`, () => {
      fc.assert(
        fc.property(textArb, (s) => {
          const t = escaped(s, depth);
          const ranges: [number, number][] = [];
          forEachLine(t, (a, b) => {
            ranges.push([a, b]);
            return true;
          });
          expect(ranges.length).toBe(expectedCount(s));
          const decoded = s.split("\n");
          ranges.forEach(([a, b], i) => {
            const line = decoded[i] as string;
            expect(lineCount({ ...t, start: a, end: b })).toBe(line.length > 0 ? 1 : 0);
          });
        }),
        { numRuns: 200 },
      );
    });

    it(`forEachHashedLine: forEachLine's ranges, a raw backslash flag and hashLine's hashes (depth ${depth})`, () => {
      fc.assert(
        fc.property(fc.oneof(textArb, fc.string()), (s) => {
          const t = escaped(s, depth);
          const want: [number, number, boolean, number, number][] = [];
          forEachLine(t, (a, b) => {
            const out = new LinesBuilder();
            hashLine(t, a, b, out, true);
            const h = out.build().hashes;
            want.push([a, b, t.buf.subarray(a, b).includes(0x5c), h[0] as number, h[1] as number]);
            return true;
          });
          const got: [number, number, boolean, number, number][] = [];
          forEachHashedLine(t, (a, b, esc, h1, h2) => {
            got.push([a, b, esc, h1 >>> 0, h2 >>> 0]);
            return true;
          });
          expect(got).toEqual(want);
        }),
        { numRuns: 300 },
      );
    });
  }

  for (const depth of [1, 2] as const) {
    it(`one walk: newlineCount, lastOpen and closeLast as the decoded text and hashLines' lastEol say (depth ${depth})`, () => {
      const out = new LinesBuilder();
      fc.assert(
        fc.property(fc.oneof(textArb, fc.string()), (s) => {
          const t = escaped(s, depth);
          expect(newlineCount(t)).toBe(s.split("\n").length - 1);
          out.reset();
          hashLines(t, t.start, t.end, out);
          expect(out.lastOpen).toBe(s.length > 0 && !s.endsWith("\n"));
          expect(Array.from(out.data.subarray(0, 2 * out.count))).toEqual(Array.from(textLines(t).hashes));
          const eol = new LinesBuilder();
          hashLines(t, t.start, t.end, eol, true);
          out.closeLast();
          expect(out.lastOpen).toBe(false);
          expect(Array.from(out.data.subarray(0, 2 * out.count))).toEqual(Array.from(eol.build().hashes));
        }),
        { numRuns: 300 },
      );
    });
  }

  // Lines long enough for the word-at-a-time runs (plainWord): every alignment of an escape against
  // the line's 4-byte words, multi-byte characters across a word, and raw newlines in the bytes.
  const longLineArb = fc.oneof(
    fc.constantFrom(...TRAPS),
    fc.string({ maxLength: 40 }).filter((s) => !s.includes("\n")),
    fc
      .tuple(fc.string({ maxLength: 9 }), fc.constantFrom(...TRAPS), fc.string({ maxLength: 9 }))
      .map(([a, b, c]) => (a + b + c).replaceAll("\n", " ")),
  );
  const longTextArb = fc
    .tuple(fc.array(longLineArb, { maxLength: 10 }), fc.boolean())
    .map(([lines, final]) => (lines.length === 0 ? "" : lines.join("\n") + (final ? "\n" : "")))
    .filter(
      (s) => !s.includes("\0") && !/[\ud800-\udfff]/.test(s.replace(/[\ud800-\udbff][\udc00-\udfff]/g, "")),
    );

  for (const depth of [1, 2] as const) {
    it(`long lines: each walk's hashes and counts are the byte-at-a-time reference's (depth ${depth})`, () => {
      fc.assert(
        fc.property(longTextArb, fc.nat(3), (s, shift) => {
          // The text at each offset in its buffer: the words' alignment differs from the line's.
          const base = escaped(s, depth);
          const buf = Buffer.concat([Buffer.from("xyz".slice(0, shift)), base.buf.subarray(0, base.end)]);
          const t = { buf, start: base.start + shift, end: base.end + shift, depth };
          expect(lineCount(t)).toBe(expectedCount(s));
          expect(newlineCount(t)).toBe(s.split("\n").length - 1);
          const ref: number[] = [];
          forEachLine(t, (a, b, next) => {
            const out = new LinesBuilder();
            hashLine(t, a, b, out, next > b);
            ref.push(...out.build().hashes);
            return true;
          });
          expect(Array.from(textLines(t).hashes)).toEqual(ref);
          expect(hashedRanges(t).length / 2).toBe(expectedCount(s));
        }),
        { numRuns: 400 },
      );
    });
  }

  it("a raw newline byte ends a line in the word runs too, as in the byte steps", () => {
    // Not valid JSON (a string holds no raw newline), but the walks must agree on it all the same.
    for (const text of ["abcdefgh\nijklmnop", "abcd\nefgh\n", "a\nbcdefghijk", "abcdefghijkl\n\n\nmnop"]) {
      const t = { buf: Buffer.from(`"${text}"`), start: 1, end: text.length + 1, depth: 1 as const };
      expect(lineCount(t)).toBe(expectedCount(text));
      const ranges = hashedRanges(t);
      const want: number[] = [];
      forEachLine(t, (a, b) => {
        want.push(a, b);
        return true;
      });
      expect(ranges).toEqual(want);
      expect(textLines(t).count).toBe(expectedCount(text));
    }
  });

  it("near-identical lines: no pair collides, and each 32-bit half collides about as a random one would", () => {
    // Every prefix of a base (0..16 characters), and each with one character changed to each of 50
    // (6,782 lines): the lines a weak mixer (a byte or a word position ignored) would confuse.
    const base = "const value = 1;";
    const alphabet = Array.from("abz019 ;=.()[]{}\"'\\\t/é😀ABZ-+*&|^%$#@!?<>,:_~`xyQ\u0001\u007f");
    const texts = new Set<string>();
    for (let len = 0; len <= base.length; len++) {
      const prefix = base.slice(0, len);
      texts.add(prefix);
      for (let pos = 0; pos < len; pos++)
        for (const ch of alphabet) texts.add(prefix.slice(0, pos) + ch + prefix.slice(pos + 1));
    }
    const lines = [...texts];
    const l = textLines(escaped(`${lines.join("\n")}\n`, 1));
    expect(l.count).toBe(lines.length);
    const pairs = new Set<string>();
    const halves = [new Set<number>(), new Set<number>()];
    let collisions = [0, 0];
    for (let i = 0; i < l.count; i++) {
      pairs.add(`${l.hashes[2 * i]}:${l.hashes[2 * i + 1]}`);
      for (const k of [0, 1] as const) {
        const h = l.hashes[2 * i + k] as number;
        if (halves[k]?.has(h)) collisions = collisions.map((c, j) => (j === k ? c + 1 : c));
        halves[k]?.add(h);
      }
    }
    expect(pairs.size).toBe(lines.length);
    // A random 32-bit hash collides here with probability ~n^2 / 2^33, about 0.005.
    expect(collisions).toEqual([0, 0]);
  });

  it("a lone surrogate escape is a character of its line, never a newline", () => {
    for (const depth of [1, 2] as const) {
      expect(lineCount(escaped("a\ud800b\nc\udc00", depth))).toBe(2);
      const l = textLines(escaped("\ud800\n\udc00\n\ud83d\ude00\n", depth));
      expect(l.count).toBe(3);
      expect(l.hashes[0]).not.toBe(l.hashes[2]);
    }
  });

  it("a hand-written \\u000a escape and a \\u escaped backslash are read as what they stand for", () => {
    const buf = Buffer.from("a\\u000ab\\u005cn");
    expect(lineCount({ buf, start: 0, end: buf.length, depth: 1 })).toBe(2);
    // depth 2: the outer \u005c is the inner escape character, so `\u005cn` is a newline
    const buf2 = Buffer.from("a\\u005cnb");
    expect(lineCount({ buf: buf2, start: 0, end: buf2.length, depth: 2 })).toBe(2);
  });
});

describe("simpleToken, the escapes read without a cursor", () => {
  // Raw bytes from the escapes' own alphabet: valid, malformed and cut escapes at both depths.
  const rawArb = fc
    .array(
      fc.constantFrom(
        "\\",
        "\\",
        "\\",
        '"',
        "n",
        "u",
        "0",
        "a",
        "F",
        "/",
        "t",
        "\n",
        "é",
        "x",
        "\\\\n",
        '\\\\\\"',
      ),
      {
        maxLength: 24,
      },
    )
    .map((parts) => Buffer.from(parts.join(""), "utf8"));

  for (const depth of [1, 2] as const) {
    it(`reads what decodeToken reads, or leaves the token to it (depth ${depth})`, () => {
      let read = 0;
      fc.assert(
        fc.property(rawArb, fc.nat(), (buf, cut) => {
          const end = buf.length === 0 ? 0 : buf.length - (cut % Math.min(buf.length, 3));
          for (let pos = 0; pos < end; pos++) {
            if (buf[pos] !== 0x5c) continue;
            const f = simpleToken(buf, pos, end, depth);
            if (f < 0) continue;
            read++;
            const c = cursorOf({ buf, start: pos, end, depth });
            expect(decodeToken(c)).toBe(f & 0xff);
            expect(c.pos).toBe(pos + (f >>> 8));
            expect(c.qn).toBe(0);
            expect(c.bad).toBe(0);
          }
        }),
        { numRuns: 2000 },
      );
      expect(read).toBeGreaterThan(100);
    });
  }
});

describe("non-canonical writers", () => {
  /** The raw depth-2 bytes of `text` with the OUTER escapes of `"` and `\` spelled as `\u0022`/`\u005c`. */
  function unicodeOuter(text: string): Buffer {
    const inner = JSON.stringify(text).slice(1, -1);
    let out = "";
    let k = 0;
    for (const ch of inner) {
      const u = k++ % 2 === 0;
      if (ch === '"') out += u ? "\\u0022" : '\\"';
      else if (ch === BS) out += u ? "\\u005c" : "\\\\";
      else out += JSON.stringify(ch).slice(1, -1);
    }
    return Buffer.from(out);
  }

  it("outer escapes spelled as \\u0022 / \\u005c give the same lines as JSON.stringify's", () => {
    fc.assert(
      fc.property(textArb, (s) => {
        const buf = unicodeOuter(s);
        const odd = textLines({ buf, start: 0, end: buf.length, depth: 2 });
        const canonical = textLines(escaped(s, 2));
        expect(odd.count).toBe(canonical.count);
        expect(Array.from(odd.hashes)).toEqual(Array.from(canonical.hashes));
      }),
      { numRuns: 300 },
    );
  });

  it("\\u escapes of characters (é, a surrogate pair) hash as the raw UTF-8 does", () => {
    const raw = Buffer.from("é😀\nA");
    const esc = Buffer.from("\\u00e9\\ud83d\\ude00\\n\\u0041");
    const a = textLines({ buf: raw, start: 0, end: raw.length, depth: 1 });
    const b = textLines({ buf: esc, start: 0, end: esc.length, depth: 1 });
    expect(Array.from(b.hashes)).toEqual(Array.from(a.hashes));
  });
});

describe("numstat against git diff --numstat", () => {
  const tmp = tempDir();
  afterAll(tmp.done);
  /** One set of arrays for every diff of this block of tests: what a reader reuses across edits. */
  const shared = new DiffScratch();

  /** Each run: a batch of pairs, one git process for the batch. */
  const agree = (pairs: readonly (readonly [string, string])[], depth: 1 | 2): void => {
    const git = gitNumstatMany(tmp.dir, pairs);
    pairs.forEach(([a, b], i) => {
      const la = textLines(escaped(a, depth));
      const lb = textLines(escaped(b, depth));
      const got = numstat(la, lb);
      expect({ added: got.added, removed: got.removed }, JSON.stringify([a, b])).toEqual(git[i]);
      expect(got.exact).toBe(true);
      // The same with arrays left over from every pair before (of every size), and from one array
      // holding both sides at offsets, as the SEARCH/REPLACE and patch readers call it.
      expect(numstat(la, lb, undefined, shared)).toEqual(got);
      const both = new Uint32Array(2 * (la.count + lb.count) + 4).fill(7);
      both.set(la.hashes.subarray(0, 2 * la.count), 2);
      both.set(lb.hashes.subarray(0, 2 * lb.count), 2 + 2 * la.count);
      expect(numstatOf(both, 1, la.count, both, 1 + la.count, lb.count, shared)).toEqual(got);
    });
  };

  /** A text and an edit of it: lines deleted, inserted and changed. */
  const editArb = (line: fc.Arbitrary<string>) =>
    fc
      .tuple(
        textArb,
        fc.array(fc.tuple(fc.nat(), fc.constantFrom("del", "ins", "chg"), line), { maxLength: 6 }),
      )
      .map(([a, ops]): [string, string] => {
        const lines = a.split("\n");
        for (const [at, op, l] of ops) {
          const i = at % (lines.length + 1);
          if (op === "del") lines.splice(i, 1);
          else if (op === "ins") lines.splice(i, 0, l);
          else lines[i] = l;
        }
        return [a, lines.join("\n")];
      });

  /** Many blank and repeated lines amid lines of their own: xdiff's multi-match rule comes into play. */
  const repetitive = fc
    .array(fc.oneof(fc.constantFrom("", "", "", "}", " "), fc.string({ minLength: 2, maxLength: 4 })), {
      maxLength: 40,
    })
    .chain((l) => fc.boolean().map((f) => (l.length ? l.join("\n") + (f ? "\n" : "") : "")))
    .filter((s) => !s.includes("\0"));

  for (const depth of [1, 2] as const) {
    it(`random text pairs (depth ${depth})`, () => {
      fc.assert(
        fc.property(fc.array(fc.tuple(textArb, textArb), { minLength: 40, maxLength: 40 }), (p) =>
          agree(p, depth),
        ),
        { numRuns: 8 },
      );
    });

    it(`an edit of a text (depth ${depth})`, () => {
      fc.assert(
        fc.property(fc.array(editArb(lineArb), { minLength: 40, maxLength: 40 }), (p) => agree(p, depth)),
        { numRuns: 8 },
      );
    });

    it(`repetitive texts, git's multi-match rule (depth ${depth})`, () => {
      fc.assert(
        fc.property(fc.array(fc.tuple(repetitive, repetitive), { minLength: 40, maxLength: 40 }), (p) =>
          agree(p, depth),
        ),
        { numRuns: 8 },
      );
    });
  }

  it("the cases by name", () => {
    const cases: [string, string][] = [
      ["", ""],
      ["", "a\n"],
      ["a\n", ""],
      ["a", "a\n"],
      ["a\r\n", "a\n"],
      ["a\nb\nc\n", "a\nB\nc\n"],
      [`x${BS}ny\n`, "x\ny\n"],
      ["é\n😀\n", "é\n😀\n!\n"],
      ["\n\n\n\n", ' \n\\"\n \n \n\n \n \n '], // a blank line amid new ones is new for git
    ];
    for (const depth of [1, 2] as const) agree(cases, depth);
  });
});
