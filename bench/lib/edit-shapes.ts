/**
 * The texts of file edits as the real clients store them (docs/cline-format.md §15.14, §16), for the
 * benchmark corpora: an old/new pair that shares most of its lines (a replacement), the same pair as a
 * Codex patch (CLI 3.x `apply_patch`) and as SEARCH/REPLACE blocks (the task format's
 * `editedExistingFile`), and code-like lines for new files. Deterministic for a given `rand`.
 */
import type { Rand } from "./corpus.ts";

/** An old text and the new text an edit turns it into. */
export interface EditPair {
  readonly oldLines: readonly string[];
  readonly newLines: readonly string[];
  /** The same change line by line: ` ` kept, `-` removed, `+` added (a patch's hunk body). */
  readonly hunk: readonly string[];
}

/**
 * Rewrites `lines` the way a coding agent's replacement does: most lines kept, about one in five
 * replaced, some removed, some added; `pick()` supplies new lines. Never an empty change.
 */
export function editPair(lines: readonly string[], rand: Rand, pick: () => string): EditPair {
  const oldLines = lines.length === 0 ? [pick()] : [...lines];
  const newLines: string[] = [];
  const hunk: string[] = [];
  for (const line of oldLines) {
    const r = rand();
    if (r < 0.2) {
      const changed = `${line} // ${pick().slice(0, 24)}`;
      hunk.push(`-${line}`, `+${changed}`);
      newLines.push(changed);
    } else if (r < 0.25) {
      hunk.push(`-${line}`);
    } else {
      hunk.push(` ${line}`);
      newLines.push(line);
    }
    if (rand() < 0.1) {
      const extra = pick();
      hunk.push(`+${extra}`);
      newLines.push(extra);
    }
  }
  if (!hunk.some((h) => h[0] !== " ")) {
    const extra = pick();
    hunk.push(`+${extra}`);
    newLines.push(extra);
  }
  return { oldLines, newLines, hunk };
}

/** A Codex patch (`*** Begin Patch` ... `*** End Patch`) of one Update File, and an Add File now and then. */
export function patchText(
  path: string,
  pair: EditPair,
  added?: { path: string; lines: readonly string[] },
): string {
  const parts = ["*** Begin Patch", `*** Update File: ${path}`, "@@", ...pair.hunk];
  if (added !== undefined) parts.push(`*** Add File: ${added.path}`, ...added.lines.map((l) => `+${l}`));
  parts.push("*** End Patch");
  return parts.join("\n");
}

/** replace_in_file's content: one SEARCH/REPLACE block per pair, separated by a blank line (as Cline writes it). */
export function searchReplace(pairs: readonly EditPair[]): string {
  return pairs
    .map((p) => ["------- SEARCH", ...p.oldLines, "=======", ...p.newLines, "+++++++ REPLACE"].join("\n"))
    .join("\n\n");
}

const IDENTS = (
  "value result items config session token cache model request response provider message handler " +
  "buffer offset count index options state store client server reader writer parser"
).split(" ");

/** A line of TypeScript-like code with quotes, a backslash and an escape: what the task corpus's files hold. */
export function codeLine(rand: Rand, i: number): string {
  const a = IDENTS[Math.floor(rand() * IDENTS.length)] as string;
  const b = IDENTS[Math.floor(rand() * IDENTS.length)] as string;
  const ind = "  ".repeat(Math.floor(rand() * 3));
  const r = rand();
  if (r < 0.4) return `${ind}const ${a}${i} = await ${b}.read("${a}", { re: /\\d+\\.ts$/ });`;
  if (r < 0.6) return `${ind}if (${a}.length > ${i}) return ${b}; // "${a}" \u00e9`;
  if (r < 0.75) return `${ind}export function ${a}_${i}(${b}: string): number {`;
  if (r < 0.85) return `${ind}}`;
  if (r < 0.92) return "";
  return `${ind}\t${b}.push(\`${a} \${${i}}\`);`;
}

/** `n` code lines. */
export function codeLines(rand: Rand, n: number): string[] {
  return Array.from({ length: n }, (_, i) => codeLine(rand, i));
}
