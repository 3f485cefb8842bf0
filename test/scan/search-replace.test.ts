/**
 * Cline's replace_in_file blocks (src/scan/search-replace.ts): the markers as Cline's parser
 * matches them (current and legacy), each block's old/new numstat against git's, at depth 1 and 2,
 * and the malformed shapes that must give null.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { lineCount } from "../../src/scan/lines.ts";
import { numstat } from "../../src/scan/numstat.ts";
import { CountingScratch } from "../../src/scan/scratch.ts";
import { searchReplaceBlocks, searchReplaceNumstat } from "../../src/scan/search-replace.ts";
import { escaped, gitNumstatMany, tempDir } from "./escaped-helpers.ts";

const BS = "\\";
const block = (old: string, neu: string, start = "------- SEARCH", end = "+++++++ REPLACE") =>
  `${start}\n${old}=======\n${neu}${end}\n`;

/** Block lines: the escaping traps, and marker look-alikes that are content. */
const lineArb = fc.oneof(
  fc.constantFrom(
    "",
    "a",
    "b",
    `${BS}n`,
    `${BS}=======`,
    "======= x",
    " =======",
    "------- SEARCH ",
    "+++++++ REPLACE!",
    '"quoted"',
    `${BS}${BS}`,
    "é😀",
    "a\r",
    "\t}",
  ),
  fc
    .string({ maxLength: 5 })
    .filter((s) => !/[\n\0]/.test(s) && !/^(=+|[-<]{3,} SEARCH>?|[+>]{3,} REPLACE>?)$/.test(s)),
);
const sideArb = fc.array(lineArb, { maxLength: 8 }).map((l) => l.map((x) => `${x}\n`).join(""));

describe("searchReplaceBlocks", () => {
  const tmp = tempDir();
  afterAll(tmp.done);
  /** Reused by every text of these tests, as a reader reuses it across a history's edits. */
  const shared = new CountingScratch();

  for (const depth of [1, 2] as const) {
    it(`each block counts as git counts its old -> new (depth ${depth})`, () => {
      fc.assert(
        fc.property(fc.array(fc.tuple(sideArb, sideArb), { minLength: 1, maxLength: 30 }), (pairs) => {
          const text = pairs.map(([o, n]) => block(o, n)).join("");
          const blocks = searchReplaceBlocks(escaped(text, depth));
          expect(blocks).not.toBeNull();
          expect(blocks?.length).toBe(pairs.length);
          const git = gitNumstatMany(tmp.dir, pairs);
          blocks?.forEach((b, i) => {
            const [o, n] = pairs[i] as [string, string];
            expect(b.old.count).toBe(lineCount(escaped(o, depth)));
            expect(b.new.count).toBe(lineCount(escaped(n, depth)));
            const got = numstat(b.old, b.new);
            expect({ added: got.added, removed: got.removed }).toEqual(git[i]);
          });
          // The one-pass sum, in arrays every text before left as they were: git's, summed.
          const sum = searchReplaceNumstat(escaped(text, depth), shared);
          expect(sum).toEqual({
            added: git.reduce((a, g) => a + g.added, 0),
            removed: git.reduce((a, g) => a + g.removed, 0),
            exact: true,
            blocks: pairs.length,
          });
        }),
        { numRuns: 10 },
      );
    });
  }

  it("reads the legacy markers, longer runs and a trailing `>`, and a text without a final newline", () => {
    const text =
      "<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n" +
      "---------- SEARCH>\na\nb\n==========\n+++ REPLACE>\n" +
      "------- SEARCH\n=======\nx\ny\n+++++++ REPLACE";
    for (const depth of [1, 2] as const) {
      const b = searchReplaceBlocks(escaped(text, depth));
      expect(b?.map((x) => [x.old.count, x.new.count])).toEqual([
        [1, 1],
        [2, 0],
        [0, 2],
      ]);
      expect(b?.map((x) => numstat(x.old, x.new))).toEqual([
        { added: 1, removed: 1, exact: true },
        { added: 0, removed: 2, exact: true },
        { added: 2, removed: 0, exact: true },
      ]);
    }
  });

  it("an unchanged line inside a block counts nothing; an empty line counts", () => {
    const b = searchReplaceBlocks(escaped(block("keep\n\nold\n", "keep\nnew\n\n\n"), 2));
    expect(b?.map((x) => numstat(x.old, x.new))).toEqual([{ added: 2, removed: 1, exact: true }]);
  });

  it("text outside the blocks is ignored; no block at all is an empty list", () => {
    expect(searchReplaceBlocks(escaped(`intro\n${block("a\n", "b\n")}outro\n`, 1))?.length).toBe(1);
    expect(searchReplaceBlocks(escaped("just a file\n", 1))).toEqual([]);
    expect(searchReplaceNumstat(escaped("just a file\n", 1), shared)?.blocks).toBe(0);
    expect(searchReplaceBlocks(escaped("", 2))).toEqual([]);
  });

  it("a marker spelled with an escape, or with a carriage return, is content (as in Cline)", () => {
    const text = `------- SEARCH\na\n=======\r\nb\n=======\nc\n+++++++ REPLACE\n`;
    const b = searchReplaceBlocks(escaped(text, 2));
    expect(b?.map((x) => [x.old.count, x.new.count])).toEqual([[3, 1]]);
  });

  it("malformed texts are null", () => {
    for (const text of [
      "------- SEARCH\na\n=======\nb\n", // never closed
      "------- SEARCH\na\n", // no separator
      "=======\nb\n+++++++ REPLACE\n", // separator outside a block
      "------- SEARCH\na\n+++++++ REPLACE\n", // end without separator
      "+++++++ REPLACE\n",
    ]) {
      for (const depth of [1, 2] as const) {
        expect(searchReplaceBlocks(escaped(text, depth)), text).toBeNull();
        expect(searchReplaceNumstat(escaped(text, depth), shared), text).toBeNull();
      }
    }
  });
});
