/**
 * A fixed phrase found in the raw bytes (src/scan/phrase.ts) exactly where the decoded text holds
 * it: never across an escape's letters (a `\n` then `The` is not `nThe`), at depth 1 and 2, with
 * the plain phrase's raw search and the KMP walk of any other phrase.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { containsPhrase } from "../../src/scan/phrase.ts";
import { escaped } from "./escaped-helpers.ts";

const BS = "\\";
const DENIED = "The user denied this operation.";
const PIECES = [
  "\n",
  `${BS}`,
  `${BS}n`,
  '"',
  "n",
  "u0022",
  "nThe user denied",
  " this operation.",
  "The user denied this operation",
  ".",
  "é",
  "\t",
  "x",
];

describe("containsPhrase", () => {
  for (const depth of [1, 2] as const) {
    it(`agrees with the decoded text's includes (depth ${depth})`, () => {
      const phrases = [DENIED, "n", "nT", "u0022", "\nThe", '"', `${BS}n`, "is op", `${BS}`, "\t"];
      fc.assert(
        fc.property(
          fc.array(fc.constantFrom(...PIECES), { maxLength: 12 }),
          fc.constantFrom(...phrases),
          (p, ph) => {
            const s = p.join("");
            expect(containsPhrase(escaped(s, depth), ph)).toBe(s.includes(ph));
          },
        ),
        { numRuns: 2000 },
      );
    });
  }

  it("never matches an escape's letters", () => {
    for (const depth of [1, 2] as const) {
      expect(containsPhrase(escaped("a\nb", depth), "n")).toBe(false);
      expect(containsPhrase(escaped("a\nb", depth), "nb")).toBe(false);
      expect(containsPhrase(escaped('say "x"', depth), "x")).toBe(true);
      expect(containsPhrase(escaped("\u0001", depth), "u0001")).toBe(false);
      expect(containsPhrase(escaped("\\\\n", depth), "n")).toBe(true); // two backslashes then a real n
      expect(containsPhrase(escaped(`result:\n${DENIED} The file was not created.`, depth), DENIED)).toBe(
        true,
      );
    }
  });

  it("stays inside its range (the bytes around it are never matched)", () => {
    const t = escaped("inside", 1);
    expect(containsPhrase(t, "new_text")).toBe(false);
    expect(containsPhrase(t, "inside")).toBe(true);
  });
});
