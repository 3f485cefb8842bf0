/**
 * The facts about Cline's files that the code relies on live in docs/cline-format.md, and the code
 * cites them as `docs/cline-format.md §N[.M]`. Every citation must name a section that exists, and
 * nothing may cite a file outside the repository (docs, code, tests, README alike).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.ts";

const DIRS = ["src", "test", "bench", "docs", "fixtures", "tools"];
const SKIP = new Set(["node_modules", "dist", "cline", "harness-out"]);

function* files(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(e.name)) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else if (/\.(ts|md|js)$/.test(e.name)) yield p;
  }
}

const sources = [...DIRS.flatMap((d) => [...files(join(ROOT, d))]), join(ROOT, "README.md")];
const sections = new Set(
  [...readFileSync(join(ROOT, "docs/cline-format.md"), "utf8").matchAll(/^#{2,3} (\d+(?:\.\d+)?)\.? /gm)].map(
    (m) => m[1] as string,
  ),
);

/**
 * Citations of the notes that live outside the repository: `SCHEMA.md` (or "SCHEMA 4.4", "SCHEMA §12"),
 * the `../shared` tree, and the design seeds by file name. Their facts belong in docs/cline-format.md.
 */
const OUTSIDE = [
  // Upper case and a word of its own: SCHEMA_VERSION or a schema.ts are not citations.
  /\bSCHEMA\b/g,
  /(?:\.\.\/|\/work\/)shared\b/g,
  /\b(?:clinecli-adapter|provider-request-capture)\.txt\b/g,
];

function outsideCitations(text: string): string[] {
  return OUTSIDE.flatMap((re) => [...text.matchAll(re)].map((m) => m[0]));
}

describe("docs/cline-format.md citations", () => {
  it("every cited section exists", () => {
    const missing: string[] = [];
    for (const f of sources) {
      const text = readFileSync(f, "utf8");
      for (const m of text.matchAll(/cline-format\.md §(\d+(?:\.\d+)?(?:(?:-|, )\d+(?:\.\d+)?)*)/g)) {
        for (const part of (m[1] as string).split(/-|, /)) {
          if (!sections.has(part)) missing.push(`${relative(ROOT, f)}: §${part}`);
        }
      }
    }
    expect(sections.size).toBeGreaterThan(20);
    expect(missing).toEqual([]);
  });

  it("nothing cites a file outside this repository (SCHEMA.md, the shared notes and seeds)", () => {
    const self = relative(ROOT, import.meta.filename);
    const offenders = sources
      .filter((f) => relative(ROOT, f) !== self)
      .flatMap((f) => outsideCitations(readFileSync(f, "utf8")).map((c) => `${relative(ROOT, f)}: ${c}`));
    expect(offenders).toEqual([]);
  });

  it.each([
    "(SCHEMA 4.4)",
    "see SCHEMA 12/13",
    "SCHEMA.md §7",
    "SCHEMA §14",
    "SCHEMA facts in cline-format.md",
    "../shared/cline/SCHEMA.md",
    "/work/shared/seeds/clinecli-adapter.txt",
    "the seed provider-request-capture.txt",
  ])("the check catches %j", (text) => {
    expect(outsideCitations(text)).not.toEqual([]);
  });

  it.each([
    "SCHEMA_VERSION",
    "MIGRATIONS, SCHEMA_VERSION",
    "docs/cline-format.md §12",
    "schema.ts",
  ])("the check lets %j pass", (text) => {
    expect(outsideCitations(text)).toEqual([]);
  });
});
