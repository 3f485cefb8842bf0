/**
 * No counting function makes content a string (issue 29's hard constraint):
 * 1. a child process runs every function of src/scan's counting core over texts full of a canary
 *    (edit texts, SEARCH/REPLACE blocks, a patch, commands, a result, paths), and the canary is in
 *    neither its heap snapshot, nor what the functions returned, nor its output; a control run that
 *    decodes the document the ordinary way does show it (so the check can fail);
 * 2. in this process, the decoding entry points (Buffer#toString and its slices, TextDecoder,
 *    JSON.parse) are replaced by traps while the functions run: none is called;
 * 3. the sources: only extension.ts makes a string from bytes, and only of the extension.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { commandKinds } from "../../src/scan/command-kinds.ts";
import { embeddedField, textEquals } from "../../src/scan/embedded-field.ts";
import { extensionOf } from "../../src/scan/extension.ts";
import { lineCount, textLines } from "../../src/scan/lines.ts";
import { numstat } from "../../src/scan/numstat.ts";
import { patchFiles } from "../../src/scan/patch.ts";
import { containsPhrase } from "../../src/scan/phrase.ts";
import { searchReplaceBlocks } from "../../src/scan/search-replace.ts";
import { expectCanaryAbsent, runCanaryChild } from "../helpers/canary.ts";
import { ROOT } from "../helpers/cli.ts";
import { escaped, tempDir } from "./escaped-helpers.ts";

// Built from pieces so this file's own source text is not the canary the heap is searched for.
const CANARY = ["Zq9", "Edits", "Canary", "7Kw"].join("");
const body = (n: number) =>
  Array.from({ length: n }, (_, i) => `line ${i} ${CANARY} "${CANARY}\\n" \\${CANARY}\t${CANARY}é`).join(
    "\n",
  );

function writeDoc(path: string): void {
  const content = `------- SEARCH\n${body(3)}\n=======\n${body(4)}\n+++++++ REPLACE\n`;
  const patch = `*** Begin Patch\n*** Update File: ${CANARY}/x.ts\n@@ ${CANARY}\n-${CANARY}\n+${CANARY}2\n*** Add File: ${CANARY}.md\n+${CANARY}\n*** End Patch\n`;
  const command = `cd ${CANARY} && git commit -m "${CANARY}" && echo '${CANARY}'`;
  const inner = JSON.stringify({
    tool: "editedExistingFile",
    path: `${CANARY}/${CANARY}.py`,
    zz_path: 1,
    content,
    zz_content: 1,
    whole: body(5),
    zz_whole: 1,
    command,
    zz_command: 1,
  });
  const doc = {
    input: {
      path: `src/${CANARY}.ts`,
      zz_path: 1,
      old_text: body(6),
      zz_old_text: 1,
      new_text: `${body(6)}\nmore ${CANARY}`,
      zz_new_text: 1,
      patch,
      zz_patch: 1,
      command,
      zz_command: 1,
      result: `${CANARY}: The user denied this operation.`,
      zz_result: 1,
    },
    text: inner,
  };
  writeFileSync(path, JSON.stringify(doc));
}

describe("the counting core never makes content a string", () => {
  const tmp = tempDir();
  afterAll(tmp.done);

  it("the heap, the results and the output of a child that counts hold no canary", () => {
    const doc = join(tmp.dir, "doc.json");
    writeDoc(doc);
    const run = runCanaryChild("test/scan/counting-canary-child.ts", tmp.dir, "counting", [doc], false);
    expectCanaryAbsent(run, CANARY);
    expectCanaryAbsent(run, "Zq9Edits"); // no part of it either
    const results = JSON.parse(readFileSync(join(run.state, "results.json"), "utf8")) as unknown[];
    // the functions did read the texts
    expect(results.slice(0, 4).map((r) => (r as { n: number }).n)).toEqual([6, 7, 10, 5]);
    expect(results.slice(4)).toEqual([
      { added: 2, removed: 1, exact: true },
      [{ added: 1, removed: 0, exact: true }],
      [
        { op: "modify", added: 1, removed: 1, exact: true, extension: "ts", moved: false },
        { op: "create", added: 1, removed: 0, exact: true, extension: "md", moved: false },
      ],
      ["commit"],
      ["commit"],
      true,
      true,
      "ts",
      "typescript",
      "py",
      "python",
      1,
    ]);
  });

  it("control: decoding the document the ordinary way puts the canary in the heap", () => {
    const doc = join(tmp.dir, "doc.json");
    writeDoc(doc);
    const run = runCanaryChild("test/scan/counting-canary-child.ts", tmp.dir, "control", [doc], true);
    expect(run.snapshot.includes(Buffer.from(CANARY))).toBe(true);
  });

  it("no decoding entry point is called while the functions run", () => {
    const texts = [1, 2].map((d) => escaped(`${body(4)}\n*** Begin Patch\n`, d as 1 | 2));
    const called: string[] = [];
    const traps: [object, string][] = [
      [Buffer.prototype, "toString"],
      [Buffer.prototype, "utf8Slice"],
      [Buffer.prototype, "latin1Slice"],
      [Buffer.prototype, "asciiSlice"],
      [Buffer.prototype, "ucs2Slice"],
      [Buffer.prototype, "hexSlice"],
      [Buffer.prototype, "base64Slice"],
      [TextDecoder.prototype, "decode"],
      [JSON, "parse"],
    ];
    const saved = traps.map(([o, k]) => (o as Record<string, unknown>)[k]);
    traps.forEach(([o, k]) => {
      (o as Record<string, unknown>)[k] = () => {
        called.push(k);
        throw new Error(`decoded with ${k}`);
      };
    });
    try {
      for (const t of texts) {
        lineCount(t);
        numstat(textLines(t), textLines(t));
        searchReplaceBlocks(t);
        patchFiles(t);
        commandKinds(t);
        containsPhrase(t, CANARY);
        containsPhrase(t, `"${CANARY}\n`);
        extensionOf(t);
        const f = embeddedField(t, "content");
        if (f?.kind === "string") textEquals(f.text, CANARY);
      }
      const doc = escaped(JSON.stringify({ tool: CANARY, content: body(3), success: false }), 1);
      const content = embeddedField(doc, "content");
      expect(content?.kind === "string" && lineCount(content.text)).toBe(3);
      expect(embeddedField(doc, "success")?.kind).toBe("false");
    } finally {
      traps.forEach(([o, k], i) => {
        (o as Record<string, unknown>)[k] = saved[i];
      });
    }
    expect(called).toEqual([]);
  });

  it("only extension.ts makes a string from bytes, and only from the extension's ASCII", () => {
    const files = [
      "escaped-text.ts",
      "lines.ts",
      "numstat.ts",
      "search-replace.ts",
      "patch.ts",
      "phrase.ts",
      "command-kinds.ts",
      "language.ts",
      "extension.ts",
      "embedded-field.ts",
    ];
    const decoding =
      /toString\(|TextDecoder|fromCharCode|fromCodePoint|decodeJsonString|JSON\.parse|latin1Slice|utf8Slice/g;
    const hits = files.flatMap((f) =>
      (readFileSync(join(ROOT, "src/scan", f), "utf8").match(decoding) ?? []).map((m) => `${f}: ${m}`),
    );
    expect(hits).toEqual(["extension.ts: fromCharCode"]);
  });
});
