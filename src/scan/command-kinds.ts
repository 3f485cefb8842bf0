/**
 * What a shell command line does that counts as delivery: a commit or a pull request
 * (docs/cline-format.md, "Counting lines from bytes"), read from the escaped command line as logical
 * bytes with a small shell tokenizer, never decoded.
 *
 * The line is split into simple commands at `;`, `&`, `|` (so `&&`, `||`, pipes), newlines, `(`, `)`
 * and backquotes; words at `'...'`, `"..."` and `\x` as the shell does, so text inside a quoted
 * argument (`echo "git commit"`) is never a command; `#` at a word's start comments out the rest of
 * the line. A command's first words may be `NAME=value` assignments and the prefixes `sudo`, `env`,
 * `command`, `time`, `nohup`, `exec`, `then`, `do`, `else`, `if`, `while`, `until`, `!`, `{`. Counted:
 *
 * - commit: `git [global options] commit` (`-C <dir>`, `-c <k=v>`, `--git-dir <d>`, `--work-tree <d>`,
 *   `--namespace <n>` take an argument; any other leading `-` word is a flag); never `commit-tree`.
 * - pull_request: `gh pr create` / `gh pr new`, `glab mr create` / `glab mr new`, `hub pull-request`,
 *   `az repos pr create` (the CLIs of GitHub, GitLab and Azure DevOps that open one).
 *
 * Not seen (documented limits): commands inside `bash -c "..."`, `eval`, heredocs, aliases and
 * scripts; `git commit` run through a variable.
 */
import { cursorOf, type EscapedText, nextByte } from "./escaped-text.ts";

export type CommandKind = "commit" | "pull_request";

/** The words a command's position may hold, matched exactly (at most 31: a bitmask of candidates). */
const WORDS = [
  "git",
  "commit",
  "gh",
  "pr",
  "create",
  "new",
  "glab",
  "mr",
  "hub",
  "pull-request",
  "az",
  "repos",
  "-C",
  "-c",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "sudo",
  "env",
  "command",
  "time",
  "nohup",
  "exec",
  "then",
  "do",
  "else",
  "if",
  "while",
  "until",
  "!",
  "{",
] as const;
type Word = (typeof WORDS)[number];
const CODES = WORDS.map((w) => Uint8Array.from(w, (ch) => ch.charCodeAt(0)));
const ALL = (2 ** WORDS.length - 1) >>> 0;
const PREFIXES: ReadonlySet<Word> = new Set<Word>([
  "sudo",
  "env",
  "command",
  "time",
  "nohup",
  "exec",
  "then",
  "do",
  "else",
  "if",
  "while",
  "until",
  "!",
  "{",
]);
const GIT_OPTIONS_WITH_ARGUMENT: ReadonlySet<Word> = new Set<Word>([
  "-C",
  "-c",
  "--git-dir",
  "--work-tree",
  "--namespace",
]);

/** One word as read: which listed word it is (if any), and the two shapes the grammar needs. */
interface WordState {
  alive: number; // bitmask over WORDS still matching
  len: number;
  dash: boolean; // starts with `-`
  assign: 0 | 1 | 2 | 3; // 0 unknown start, 1 a name so far, 2 NAME=, 3 not an assignment
}

function resetWord(w: WordState): void {
  w.alive = ALL;
  w.len = 0;
  w.dash = false;
  w.assign = 0;
}

function feed(w: WordState, b: number): void {
  if (w.len === 0) w.dash = b === 0x2d;
  if (w.assign < 2) {
    const name = (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x5f;
    const digit = b >= 0x30 && b <= 0x39;
    if (w.assign === 0) w.assign = name ? 1 : 3;
    else if (b === 0x3d) w.assign = 2;
    else if (!name && !digit) w.assign = 3;
  }
  let alive = w.alive;
  for (let m = alive; m !== 0; m &= m - 1) {
    const i = 31 - Math.clz32(m & -m);
    if ((CODES[i] as Uint8Array)[w.len] !== b) alive &= ~(1 << i);
  }
  w.alive = alive >>> 0;
  w.len++;
}

function wordOf(w: WordState): Word | null {
  for (let m = w.alive; m !== 0; m &= m - 1) {
    const i = 31 - Math.clz32(m & -m);
    if ((CODES[i] as Uint8Array).length === w.len) return WORDS[i] as Word;
  }
  return null;
}

/** Where a simple command's grammar stands after its words so far. */
type Stage =
  | "start"
  | "git"
  | "git-arg"
  | "gh"
  | "gh-pr"
  | "glab"
  | "glab-mr"
  | "hub"
  | "az"
  | "az-repos"
  | "az-pr"
  | "done";

function step(stage: Stage, w: WordState, out: CommandKind[]): Stage {
  const word = wordOf(w);
  switch (stage) {
    case "start":
      if (w.assign === 2 || (word !== null && PREFIXES.has(word))) return "start";
      if (word === "git") return "git";
      if (word === "gh") return "gh";
      if (word === "glab") return "glab";
      if (word === "hub") return "hub";
      if (word === "az") return "az";
      return "done";
    case "git":
      if (word !== null && GIT_OPTIONS_WITH_ARGUMENT.has(word)) return "git-arg";
      if (w.dash) return "git";
      if (word === "commit") out.push("commit");
      return "done";
    case "git-arg":
      return "git";
    case "gh":
    case "glab":
      if (w.dash) return stage;
      if (stage === "gh" && word === "pr") return "gh-pr";
      if (stage === "glab" && word === "mr") return "glab-mr";
      return "done";
    case "gh-pr":
    case "glab-mr":
      if (word === "create" || word === "new") out.push("pull_request");
      return "done";
    case "hub":
      if (w.dash) return "hub";
      if (word === "pull-request") out.push("pull_request");
      return "done";
    case "az":
      return word === "repos" ? "az-repos" : "done";
    case "az-repos":
      return word === "pr" ? "az-pr" : "done";
    case "az-pr":
      if (word === "create") out.push("pull_request");
      return "done";
    default:
      return "done";
  }
}

const isSeparator = (b: number): boolean =>
  b === 0x3b || b === 0x26 || b === 0x7c || b === 0x0a || b === 0x28 || b === 0x29 || b === 0x60;
const isBlank = (b: number): boolean => b === 0x20 || b === 0x09 || b === 0x0d || b === 0x3c || b === 0x3e;

/** The commits and pull requests a command line makes, in order (one per command that makes one). */
export function commandKinds(t: EscapedText): readonly CommandKind[] {
  const out: CommandKind[] = [];
  const c = cursorOf(t);
  const w: WordState = { alive: ALL, len: 0, dash: false, assign: 0 };
  let inWord = false;
  let stage: Stage = "start";
  const endWord = (): void => {
    if (inWord && stage !== "done") stage = step(stage, w, out);
    inWord = false;
    resetWord(w);
  };
  for (let b = nextByte(c); b >= 0; b = nextByte(c)) {
    if (b === 0x27) {
      // '...': every byte literal up to the next quote
      inWord = true;
      for (b = nextByte(c); b >= 0 && b !== 0x27; b = nextByte(c)) feed(w, b);
    } else if (b === 0x22) {
      // "...": `\` escapes the next byte
      inWord = true;
      for (b = nextByte(c); b >= 0 && b !== 0x22; b = nextByte(c)) {
        if (b === 0x5c) b = nextByte(c);
        if (b >= 0) feed(w, b);
      }
    } else if (b === 0x5c) {
      b = nextByte(c);
      if (b === 0x0a || b < 0) continue; // a line continuation
      inWord = true;
      feed(w, b);
    } else if (b === 0x23 && !inWord) {
      for (b = nextByte(c); b >= 0 && b !== 0x0a; b = nextByte(c));
      endWord();
      stage = "start";
    } else if (isSeparator(b)) {
      endWord();
      stage = "start";
    } else if (isBlank(b)) {
      endWord();
    } else {
      inWord = true;
      feed(w, b);
    }
  }
  endWord();
  return out;
}
