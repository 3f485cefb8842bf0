/**
 * Child process for the counting canary (test/scan/counting-canary.test.ts): reads a document of
 * edit texts as BYTES, runs every counting function over them, writes what they returned, then a V8
 * heap snapshot. It never decodes a content range itself (the ranges are found by byte search for
 * the ASCII keys around them). argv: <docPath> <stateDir> <snapshotPath> [control]
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeHeapSnapshot } from "node:v8";
import { commandKinds } from "../../src/scan/command-kinds.ts";
import { embeddedField } from "../../src/scan/embedded-field.ts";
import type { EscapedText } from "../../src/scan/escaped-text.ts";
import { extensionOf } from "../../src/scan/extension.ts";
import { languageOf } from "../../src/scan/language.ts";
import { lineCount, textLines } from "../../src/scan/lines.ts";
import { numstat } from "../../src/scan/numstat.ts";
import { patchFiles } from "../../src/scan/patch.ts";
import { containsPhrase } from "../../src/scan/phrase.ts";
import { searchReplaceBlocks } from "../../src/scan/search-replace.ts";

const [docPath, stateDir, snapshot, mode] = process.argv.slice(2) as [
  string,
  string,
  string,
  string | undefined,
];
const buf = readFileSync(docPath);

/** The raw content after `open` up to `close` (ASCII keys, never content). */
function range(open: string, close: string, depth: 1 | 2): EscapedText {
  const start = buf.indexOf(open) + Buffer.byteLength(open);
  return { buf, start, end: buf.indexOf(close, start), depth };
}
const d1 = (key: string) => range(`"${key}":"`, `","zz_${key}"`, 1);
const d2 = (key: string) => range(`\\"${key}\\":\\"`, `\\",\\"zz_${key}\\"`, 2);

const results: unknown[] = [];
for (const [t, depth] of [
  [d1("old_text"), 1],
  [d1("new_text"), 1],
  [d2("content"), 2],
  [d2("whole"), 2],
] as const) {
  results.push({ depth, n: lineCount(t), lines: Array.from(textLines(t).hashes) });
}
results.push(numstat(textLines(d1("old_text")), textLines(d1("new_text"))));
results.push(searchReplaceBlocks(d2("content"))?.map((b) => numstat(b.old, b.new)));
results.push(patchFiles(d1("patch")));
results.push(commandKinds(d1("command")), commandKinds(d2("command")));
results.push(containsPhrase(d1("result"), "The user denied this operation."));
results.push(containsPhrase(d1("result"), "Canary"));
for (const p of [d1("path"), d2("path")]) results.push(extensionOf(p), languageOf(extensionOf(p)));
// the task-format message itself: its content found in place, then counted
const text = range('"text":"', '"}', 1);
const content = embeddedField(text, "content");
results.push(content?.kind === "string" ? searchReplaceBlocks(content.text)?.length : "no content");

const keep: unknown[] = [results];
if (mode === "control") {
  // The ordinary way (decoding the document): the canary must then be seen in the heap.
  keep.push(JSON.parse(buf.toString("utf8")));
}
mkdirSync(stateDir, { recursive: true });
writeFileSync(join(stateDir, "results.json"), JSON.stringify(results));
writeHeapSnapshot(snapshot);
process.stdout.write(`${JSON.stringify(results.slice(4))}\nkept ${keep.length}\n`);
