/**
 * The line counting of the task format's edits alone (issue 29's read side): `HOME=<a Cline home>
 * npx tsx bench/edit-lines.ts [--tasks N] [--reps R]` (not part of npm test). Scans the
 * `ui_messages.json` of N tasks with the adapter's schema (views of the file buffers, as the adapter
 * reads them), keeps every edit's scanned `content`, then times `editLines` over all of them, R rounds:
 * no I/O, no scan, no ledger in the measured part. Prints the median, the bytes counted and the totals
 * (lines added / removed, inexact edits) so two trees can be compared on the same counts.
 */
import { readdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { editLines, isEditBody } from "../src/adapter/cline-tasks/edits.ts";
import { uiMessagesSchema } from "../src/adapter/cline-tasks/schema.ts";
import type { EscapedText } from "../src/scan/escaped-text.ts";
import { scanFile } from "../src/scan/scanner.ts";
import type { RawBytes } from "../src/scan/schema.ts";
import { fmt, median } from "./lib/stats.ts";

const argOf = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const TASKS = argOf("--tasks", 2_000);
const REPS = argOf("--reps", 7);

type Tool = Parameters<typeof editLines>[0];
const tasksDir = join(homedir(), ".cline", "data", "tasks");
const items: { tool: Tool; content: EscapedText | undefined }[] = [];
let bytes = 0;
for (const id of readdirSync(tasksDir).slice(0, TASKS)) {
  const msgs = (await scanFile(join(tasksDir, id, "ui_messages.json"), uiMessagesSchema, { views: true }))
    .value as { text?: unknown }[];
  for (const m of msgs) {
    const body = m.text as Record<string, unknown> | undefined;
    if (body === undefined || typeof body !== "object" || !isEditBody(body)) continue;
    const c = body.content as RawBytes | undefined;
    const content: EscapedText | undefined =
      c === undefined || typeof c !== "object" || !("buf" in c)
        ? undefined
        : { buf: c.buf, start: c.start, end: c.end, depth: c.depth ?? 1 };
    if (content !== undefined) bytes += content.end - content.start;
    items.push({ tool: body.tool as Tool, content });
  }
}
const runs: number[] = [];
let totals = "";
for (let r = 0; r < REPS; r++) {
  let added = 0;
  let removed = 0;
  let inexact = 0;
  const t0 = process.cpuUsage();
  for (const it of items) {
    const l = editLines(it.tool, it.content);
    added += l.linesAdded;
    removed += l.linesRemoved;
    if (!l.exact) inexact++;
  }
  const t = process.cpuUsage(t0);
  runs.push((t.user + t.system) / 1000);
  totals = `+${added} -${removed}, ${inexact} inexact`;
}
console.log(
  `editLines: ${items.length} edit messages of ${TASKS} tasks, ${fmt(bytes / 2 ** 20)} MiB of content; ` +
    `median ${fmt(median(runs), 0)} ms CPU (${runs.map((x) => fmt(x, 0)).join(" ")}); ${totals}`,
);
