/**
 * Escaped texts for the byte-level counting tests: a text's raw bytes as a real writer lays them
 * out (JSON.stringify once for a plain field, twice for the task format's JSON-in-a-string), inside
 * a larger document so that nothing may read outside the range; and `git diff --numstat` itself.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EscapedText } from "../../src/scan/escaped-text.ts";

/** `text` as the content of a JSON string escaped `depth` times, amid other bytes. */
export function escaped(text: string, depth: 1 | 2): EscapedText {
  if (depth === 1) {
    const pre = '{"type":"tool_use","input":{"path":"a.ts","new_text":"';
    const raw = JSON.stringify(text).slice(1, -1);
    const doc = `${pre}${raw}","insert_line":3}}`;
    const buf = Buffer.from(doc, "utf8");
    const start = Buffer.byteLength(pre);
    return { buf, start, end: start + Buffer.byteLength(raw), depth: 1 };
  }
  const inner = JSON.stringify({ tool: "editedExistingFile", path: "a.ts", content: text, x: 1 });
  const outer = JSON.stringify({ ts: 1, type: "say", say: "tool", text: inner });
  const buf = Buffer.from(outer, "utf8");
  // The content's raw range: after `\"content\":\"`, before `\",\"x\":1}`.
  const open = Buffer.from('\\"content\\":\\"');
  const close = Buffer.from('\\",\\"x\\":1}"');
  const start = buf.indexOf(open) + open.length;
  const end = buf.lastIndexOf(close);
  return { buf, start, end, depth: 2 };
}

/** `git diff --numstat` of two file contents (git's own count: the ground truth). */
export function gitNumstat(dir: string, a: string, b: string): { added: number; removed: number } {
  const fa = join(dir, "a");
  const fb = join(dir, "b");
  writeFileSync(fa, a);
  writeFileSync(fb, b);
  let out = "";
  try {
    out = execFileSync(
      "git",
      ["-c", "core.autocrlf=false", "-c", "diff.algorithm=myers", "diff", "--no-index", "--numstat", fa, fb],
      { encoding: "utf8" },
    );
  } catch (e) {
    // --no-index exits 1 when the files differ
    out = String((e as { stdout?: string }).stdout ?? "");
  }
  const m = /^(\d+)\t(\d+)\t/.exec(out);
  return m ? { added: Number(m[1]), removed: Number(m[2]) } : { added: 0, removed: 0 };
}

/** `git diff --numstat` of many pairs in ONE git run (two folders compared file by file). */
export function gitNumstatMany(
  dir: string,
  pairs: readonly (readonly [string, string])[],
): { added: number; removed: number }[] {
  rmSync(join(dir, "A"), { recursive: true, force: true });
  rmSync(join(dir, "B"), { recursive: true, force: true });
  mkdirSync(join(dir, "A"));
  mkdirSync(join(dir, "B"));
  pairs.forEach(([a, b], i) => {
    writeFileSync(join(dir, "A", String(i)), a);
    writeFileSync(join(dir, "B", String(i)), b);
  });
  let out = "";
  try {
    out = execFileSync(
      "git",
      [
        "-c",
        "core.autocrlf=false",
        "-c",
        "diff.algorithm=myers",
        "diff",
        "--no-index",
        "--numstat",
        "A",
        "B",
      ],
      { encoding: "utf8", cwd: dir },
    );
  } catch (e) {
    out = String((e as { stdout?: string }).stdout ?? ""); // --no-index exits 1 when files differ
  }
  const res = pairs.map(() => ({ added: 0, removed: 0 }));
  for (const line of out.split("\n")) {
    const m = /^(\d+)\t(\d+)\t\{A => B\}\/(\d+)$/.exec(line);
    if (m) res[Number(m[3])] = { added: Number(m[1]), removed: Number(m[2]) };
  }
  return res;
}

export function tempDir(): { dir: string; done: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "numstat-"));
  return { dir, done: () => rmSync(dir, { recursive: true, force: true }) };
}
