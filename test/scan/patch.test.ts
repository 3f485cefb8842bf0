/**
 * apply_patch texts (src/scan/patch.ts) in the shape Cline CLI 3.x stores (`*** Begin Patch` ...
 * `*** End Patch`, docs/cline-format.md "Counting lines from bytes"): per file its operation, its hunks' `+`/`-` lines
 * counted as git counts the applied change, a Delete File inexact, the extension of the path (of
 * the `Move to:` path when moved), and the malformed shapes that give null.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { patchFiles } from "../../src/scan/patch.ts";
import { CountingScratch } from "../../src/scan/scratch.ts";
import { escaped, gitNumstatMany, tempDir } from "./escaped-helpers.ts";

const BS = "\\";
const lineArb = fc.oneof(
  fc.constantFrom(
    "",
    "a",
    "b",
    `${BS}n`,
    "*** End Patch",
    "+x",
    "-y",
    '"q"',
    `${BS}${BS}`,
    "é",
    "a\r",
    "\t}",
  ),
  fc.string({ maxLength: 5 }).filter((s) => !/[\n\0]/.test(s)),
);
const linesArb = fc.array(lineArb, { maxLength: 8 });

describe("patchFiles", () => {
  const tmp = tempDir();
  afterAll(tmp.done);
  /** Reused by every patch of these tests, as a reader reuses it across a history's edits. */
  const shared = new CountingScratch();

  it("a sample of every operation", () => {
    const text = [
      "*** Begin Patch",
      "*** Add File: src/new.TS",
      "+export const a = 1;",
      "+",
      "+// end",
      "*** Update File: lib/util.py",
      "@@ def f():",
      "     x = 1",
      "-    return x",
      "+    return x + 1",
      "*** Update File: README",
      "*** Move to: docs/readme.md",
      "@@",
      " # Title",
      "-old",
      "+new",
      "+more",
      "*** End of File",
      "*** Delete File: old/gone.go",
      "*** End Patch",
      "",
    ].join("\n");
    for (const depth of [1, 2] as const) {
      expect(patchFiles(escaped(text, depth))).toEqual([
        { op: "create", added: 3, removed: 0, exact: true, extension: "ts", moved: false },
        { op: "modify", added: 1, removed: 1, exact: true, extension: "py", moved: false },
        { op: "modify", added: 2, removed: 1, exact: true, extension: "md", moved: true },
        { op: "delete", added: 0, removed: 0, exact: false, extension: "go", moved: false },
      ]);
    }
  });

  for (const depth of [1, 2] as const) {
    it(`a hunk's - and + lines count as git counts old -> new (depth ${depth})`, () => {
      fc.assert(
        fc.property(fc.array(fc.tuple(linesArb, linesArb), { minLength: 1, maxLength: 30 }), (hunks) => {
          const body = hunks.flatMap(([o, n], i) => [
            `*** Update File: f${i}.rs`,
            "@@",
            " context",
            ...o.map((l) => `-${l}`),
            ...n.map((l) => `+${l}`),
            " context",
          ]);
          const text = escaped(["*** Begin Patch", ...body, "*** End Patch"].join("\n"), depth);
          const files = patchFiles(text);
          expect(files?.length).toBe(hunks.length);
          expect(patchFiles(text, shared)).toEqual(files);
          const git = gitNumstatMany(
            tmp.dir,
            hunks.map(
              ([o, n]) => [o.map((l) => `${l}\n`).join(""), n.map((l) => `${l}\n`).join("")] as const,
            ),
          );
          files?.forEach((f, i) => {
            expect({ added: f.added, removed: f.removed }).toEqual(git[i]);
            expect(f).toMatchObject({ op: "modify", exact: true, extension: "rs" });
          });
        }),
        { numRuns: 10 },
      );
    });
  }

  it("runs are counted apart: context between them separates them", () => {
    const text = "*** Begin Patch\n*** Update File: a.c\n-x\n+y\n x\n-y\n+x\n*** End Patch";
    expect(patchFiles(escaped(text, 1))).toEqual([
      { op: "modify", added: 2, removed: 2, exact: true, extension: "c", moved: false },
    ]);
    // the same lines in one run: x and y swap places, one line each way
    const one = "*** Begin Patch\n*** Update File: a.c\n-x\n-y\n+y\n+x\n*** End Patch";
    expect(patchFiles(escaped(one, 1))?.[0]).toMatchObject({ added: 1, removed: 1 });
  });

  it("an Add File counts every + line; an Add File or Delete File of no extension", () => {
    const text =
      "*** Begin Patch\n*** Add File: Makefile\n+all:\n+\n+\tcc x.c\n*** Delete File: .env\n*** End Patch\n";
    expect(patchFiles(escaped(text, 2))).toEqual([
      { op: "create", added: 3, removed: 0, exact: true, extension: "", moved: false },
      { op: "delete", added: 0, removed: 0, exact: false, extension: "", moved: false },
    ]);
  });

  it("malformed texts are null", () => {
    for (const text of [
      "", // nothing
      "*** Update File: a.ts\n-x\n+y\n*** End Patch\n", // no Begin
      "*** Begin Patch\n*** Update File: a.ts\n-x\n+y\n", // no End
      "*** Begin Patch\n-x\n*** End Patch\n", // a hunk line before any file
      "*** Begin Patch\n*** Add File: a.ts\nno plus\n*** End Patch\n",
      "*** Begin Patch\n*** Delete File: a.ts\n-x\n*** End Patch\n",
      "*** Begin Patch\n*** Update File: a.ts\n?x\n*** End Patch\n",
    ]) {
      for (const depth of [1, 2] as const) expect(patchFiles(escaped(text, depth)), text).toBeNull();
    }
  });
});
