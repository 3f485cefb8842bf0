/**
 * A path's extension (src/scan/extension.ts) as Node's `path.extname` finds it, lower-cased, from
 * the escaped path (Windows separators are escaped backslashes), at depth 1 and 2; and the language
 * table (src/scan/language.ts).
 */
import { extname } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { extensionOf, MAX_EXTENSION_BYTES } from "../../src/scan/extension.ts";
import { languageOf } from "../../src/scan/language.ts";
import { escaped } from "./escaped-helpers.ts";

/** What the extension must be: extname of the last segment, kept when short and plain ASCII. */
function expected(path: string): string {
  const last = path.split(/[/\\]/).pop() ?? "";
  const ext = extname(last).slice(1);
  return ext.length <= MAX_EXTENSION_BYTES && /^[A-Za-z0-9_+-]*$/.test(ext) ? ext.toLowerCase() : "";
}

describe("extensionOf", () => {
  const cases = [
    "src/a.ts",
    "src/A.TSX",
    "C:\\work\\x.RS",
    "dir.d/file",
    "dir.d\\file",
    ".gitignore",
    "a/.env",
    "a/.env.local",
    "a.",
    "a..b",
    "archive.tar.gz",
    "é/ü.py",
    "x.ts~",
    "x.c++",
    "x.verylongextension1234567",
    "a/b/",
    "",
    'we"ird.md',
    "new\nline.go",
  ];
  for (const depth of [1, 2] as const) {
    it(`the cases (depth ${depth})`, () => {
      for (const p of cases) expect(extensionOf(escaped(p, depth)), p).toBe(expected(p));
    });
    it(`random paths (depth ${depth})`, () => {
      const seg = fc.oneof(
        fc.constantFrom(".", "..", "a", "B", "\\", "/", "é", ".md", "ts", '"', "\n"),
        fc.string(),
      );
      fc.assert(
        fc.property(fc.array(seg, { maxLength: 8 }), (parts) => {
          const p = parts.join("");
          expect(extensionOf(escaped(p, depth))).toBe(expected(p));
        }),
        { numRuns: 500 },
      );
    });
  }
});

describe("languageOf", () => {
  it("maps the usual extensions and falls back to other", () => {
    expect(
      ["ts", "tsx", "js", "py", "go", "rs", "java", "md", "json", "yml", "sh", "", "xyz"].map(languageOf),
    ).toEqual([
      "typescript",
      "typescript",
      "javascript",
      "python",
      "go",
      "rust",
      "java",
      "markdown",
      "json",
      "yaml",
      "shell",
      "other",
      "other",
    ]);
    expect(languageOf("constructor")).toBe("other");
    expect(languageOf("__proto__")).toBe("other");
  });
});
