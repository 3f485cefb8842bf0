/**
 * The facts about Cline's files that the code relies on live in docs/cline-format.md, and the code
 * cites them as `docs/cline-format.md §N[.M]`. Every citation must name a section that exists, and
 * nothing may cite a file outside the repository.
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

  it("nothing cites SCHEMA.md, a file outside this repository", () => {
    const self = relative(ROOT, import.meta.filename);
    const offenders = sources
      .filter((f) => relative(ROOT, f) !== self && /SCHEMA\.md/.test(readFileSync(f, "utf8")))
      .map((f) => relative(ROOT, f));
    expect(offenders).toEqual([]);
  });
});
