/**
 * The byte-level line diff of issue 29 on a 10,000-line file pair: `npx tsx bench/numstat.ts
 * [--reps N]` (not part of npm test). In one run, interleaved, for a file of 10,000 source-like
 * lines and three edits of it (1 % of the lines changed here and there; a whole rewrite; the same
 * lines shuffled: the pathological case that meets the search budget), at depth 1 and 2:
 *   bytes:  textLines of both escaped texts + numstat (src/scan: no string is made), vs
 *   decode: JSON.parse of both texts (twice at depth 2) and `split("\n")`, the cost of merely
 *           decoding them the ordinary way (no diff at all).
 * Prints medians, the ratio bytes/decode, the counts (exact or not) and the heap growth of one
 * pathological diff (the search keeps one frontier array: O(lines), not O(lines^2)).
 */

import type { EscapedText } from "../src/scan/escaped-text.ts";
import { textLines } from "../src/scan/lines.ts";
import { numstat } from "../src/scan/numstat.ts";
import { fmt, fullGcFunction, interleave, median } from "./lib/stats.ts";

const argOf = (name: string, dflt: string): string => {
  const i = process.argv.indexOf(name);
  return i > 0 ? (process.argv[i + 1] ?? dflt) : dflt;
};
const REPS = Number(argOf("--reps", "7"));
const N = 10_000;

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const rand = rng(29);
const base = Array.from(
  { length: N },
  (_, i) => `${"  ".repeat(i % 4)}const v${i} = "s\\\\${i}" + call(${i % 97}, 'x'); // é ${i % 13}\t`,
);
const edits: Record<string, string[]> = {
  "1% edited": base.map((l, i) => (rand() < 0.01 ? `${l} // changed ${i}` : l)).filter(() => rand() > 0.002),
  rewrite: base.map((l, i) => `${l} rewritten ${i}`),
  shuffled: [...base].sort(() => rand() - 0.5),
};

function escapedText(text: string, depth: 1 | 2): { t: EscapedText; json: string } {
  const json = depth === 1 ? JSON.stringify(text) : JSON.stringify(JSON.stringify({ content: text }));
  const buf = Buffer.from(json);
  return depth === 1
    ? { t: { buf, start: 1, end: buf.length - 1, depth }, json }
    : { t: { buf, start: 15, end: buf.length - 5, depth }, json }; // inside `"{\"content\":\"` ... `\"}"`
}

const rows: string[] = [];
for (const depth of [1, 2] as const) {
  const a = escapedText(`${base.join("\n")}\n`, depth);
  for (const [name, lines] of Object.entries(edits)) {
    const b = escapedText(`${lines.join("\n")}\n`, depth);
    let result = numstat(textLines(a.t), textLines(b.t));
    const runs = await interleave(
      {
        bytes: () => {
          result = numstat(textLines(a.t), textLines(b.t));
        },
        decode: () => {
          const da = depth === 1 ? JSON.parse(a.json) : JSON.parse(JSON.parse(a.json)).content;
          const db = depth === 1 ? JSON.parse(b.json) : JSON.parse(JSON.parse(b.json)).content;
          return da.split("\n").length + db.split("\n").length;
        },
      },
      { reps: REPS, warmup: 2 },
    );
    const mb = median(runs.bytes);
    const md = median(runs.decode);
    rows.push(
      `depth ${depth}  ${name.padEnd(10)} bytes ${fmt(mb, 2).padStart(8)} ms  decode ${fmt(md, 2).padStart(7)} ms` +
        `  ratio ${fmt(mb / md, 2).padStart(6)}  +${result.added} -${result.removed} exact=${result.exact}`,
    );
  }
}

// Heap growth of one pathological diff (shuffled, depth 1): bounded by the frontier array.
const gc = fullGcFunction();
const a = escapedText(`${base.join("\n")}\n`, 1);
const b = escapedText(`${(edits.shuffled as string[]).join("\n")}\n`, 1);
const la = textLines(a.t);
const lb = textLines(b.t);
gc();
const before = process.memoryUsage();
const r = numstat(la, lb);
const after = process.memoryUsage();
rows.push(
  `pathological diff: heap +${fmt((after.heapUsed - before.heapUsed) / 1024, 0)} KiB, array buffers +${fmt(
    (after.arrayBuffers - before.arrayBuffers) / 1024,
    0,
  )} KiB (${N} lines a side), exact=${r.exact}`,
);
process.stdout.write(`${rows.join("\n")}\n`);
