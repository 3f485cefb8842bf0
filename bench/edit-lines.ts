/**
 * The line counting of the task format's edits alone (issue 29's read side): `HOME=<a Cline home>
 * npx tsx bench/edit-lines.ts [--tasks N] [--reps R] [--base <another tree's src/>] [--only edit|new]`
 * (not part of npm test). Scans the `ui_messages.json` of N tasks with the adapter's schema (views of
 * the file buffers, as the adapter reads them), keeps every edit's scanned `content`, then times
 * `editLines` over all of them, R rounds: no I/O, no scan, no ledger in the measured part. With
 * `--base`, that tree's `editLines` is timed too, interleaved round by round (A B, B A, ...): a tree
 * before `CountingScratch` ignores the third argument. Prints medians of the main thread's CPU and of
 * the process's (the GC threads included), the bytes counted and each tree's totals (lines added /
 * removed, inexact edits), which must be equal.
 */
import { readdirSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { editLines, isEditBody } from "../src/adapter/cline-tasks/edits.ts";
import { uiMessagesSchema } from "../src/adapter/cline-tasks/schema.ts";
import type { EscapedText } from "../src/scan/escaped-text.ts";
import { scanFile } from "../src/scan/scanner.ts";
import type { RawBytes } from "../src/scan/schema.ts";
import { CountingScratch } from "../src/scan/scratch.ts";
import { fmt, median } from "./lib/stats.ts";

const argOf = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const TASKS = Number(argOf("--tasks") ?? 2_000);
const REPS = Number(argOf("--reps") ?? 7);
const BASE = argOf("--base");
const ONLY = argOf("--only");

type Tool = Parameters<typeof editLines>[0];
type Count = typeof editLines;
const tasksDir = join(homedir(), ".cline", "data", "tasks");
const items: { tool: Tool; content: EscapedText | undefined }[] = [];
let bytes = 0;
for (const id of readdirSync(tasksDir).slice(0, TASKS)) {
  const msgs = (await scanFile(join(tasksDir, id, "ui_messages.json"), uiMessagesSchema, { views: true }))
    .value as { text?: unknown }[];
  for (const m of msgs) {
    const body = m.text as Record<string, unknown> | undefined;
    if (body === undefined || typeof body !== "object" || !isEditBody(body)) continue;
    const tool = body.tool as Tool;
    if ((ONLY === "new") !== (tool === "newFileCreated") && ONLY !== undefined) continue;
    const c = body.content as RawBytes | undefined;
    const content: EscapedText | undefined =
      c === undefined || typeof c !== "object" || !("buf" in c)
        ? undefined
        : { buf: c.buf, start: c.start, end: c.end, depth: c.depth ?? 1 };
    if (content !== undefined) bytes += content.end - content.start;
    items.push({ tool, content });
  }
}

const trees: Record<string, Count> = { this: editLines };
if (BASE !== undefined) {
  const mod = (await import(pathToFileURL(resolve(BASE, "adapter/cline-tasks/edits.ts")).href)) as {
    editLines?: Count;
    default?: { editLines: Count };
  };
  const base = mod.editLines ?? mod.default?.editLines;
  if (base === undefined) throw new Error(`no editLines in ${BASE}`);
  trees.base = base;
}
const cpu: Record<string, { main: number[]; process: number[]; totals: string }> = {};
for (let r = 0; r < REPS; r++) {
  const names = Object.keys(trees);
  for (const name of r % 2 === 0 ? names : names.reverse()) {
    const count = trees[name] as Count;
    // One set of arrays for all edits, as the adapter keeps one for every document it parses.
    const scratch = new CountingScratch();
    let added = 0;
    let removed = 0;
    let inexact = 0;
    const p0 = process.cpuUsage();
    const m0 = process.threadCpuUsage();
    for (const it of items) {
      const l = count(it.tool, it.content, scratch);
      added += l.linesAdded;
      removed += l.linesRemoved;
      if (!l.exact) inexact++;
    }
    const p = process.cpuUsage(p0);
    const m = process.threadCpuUsage(m0);
    const c = cpu[name] ?? { main: [], process: [], totals: "" };
    cpu[name] = c;
    c.main.push((m.user + m.system) / 1000);
    c.process.push((p.user + p.system) / 1000);
    c.totals = `+${added} -${removed}, ${inexact} inexact`;
  }
}
console.log(
  `editLines: ${items.length} edit messages of ${TASKS} tasks, ${fmt(bytes / 2 ** 20)} MiB of content, ${REPS} rounds`,
);
for (const [name, c] of Object.entries(cpu)) {
  console.log(
    `  ${name}: main thread ${fmt(median(c.main), 0)} ms, process ${fmt(median(c.process), 0)} ms CPU ` +
      `(process ${c.process.map((x) => fmt(x, 0)).join(" ")}); ${c.totals}`,
  );
}
