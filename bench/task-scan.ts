/**
 * The task format's allow-list scan alone: `npx tsx bench/task-scan.ts [--tasks N] [--reps R]`
 * (not part of npm test). The `ui_messages.json` documents of N tasks (bench/lib/task-corpus.ts,
 * held in memory: no I/O, no ledger) scanned with the adapter's schema, interleaved with the naive
 * read of the same buffers (`JSON.parse` of each document and of each request's inner text). The
 * backfill (bench/tasks.ts) is this scan plus the ledger's inserts; this isolates the first.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { uiMessagesSchema } from "../src/adapter/cline-tasks/schema.ts";
import { scanBuffer } from "../src/scan/scanner.ts";
import { renderTable } from "./lib/report.ts";
import { fmt, interleave, MiB, median } from "./lib/stats.ts";
import { writeTaskCorpus } from "./lib/task-corpus.ts";

const argOf = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const TASKS = argOf("--tasks", 2_000);
const REPS = argOf("--reps", 7);

const work = mkdtempSync(join(tmpdir(), "cline-otel-bench-task-scan-"));
try {
  const corpus = writeTaskCorpus(join(work, "home"), TASKS);
  const bufs = corpus.files.map((f) => readFileSync(f));
  const bytes = bufs.reduce((s, b) => s + b.length, 0);
  let sink = 0;
  const runs = await interleave(
    {
      scan: () => {
        for (const b of bufs) sink += (scanBuffer(b, uiMessagesSchema) as unknown[]).length;
      },
      naive: () => {
        for (const b of bufs)
          for (const msg of JSON.parse(b.toString("utf8")) as { say?: string; text?: string }[])
            if (msg.say === "api_req_started" && msg.text !== undefined)
              sink += (JSON.parse(msg.text) as { tokensIn: number }).tokensIn;
      },
    },
    { reps: REPS },
  );
  if (sink === 0) throw new Error("the scan found nothing");
  const scan = median(runs.scan);
  const naive = median(runs.naive);
  console.log(`task scan: ${TASKS} tasks, ${fmt(bytes / MiB)} MiB in memory, ${REPS} interleaved rounds`);
  console.log(
    renderTable([
      {
        case: "scan",
        measure: `ui_messages.json of ${TASKS} tasks`,
        value: `${fmt(scan, 0)} ms`,
        baseline: `${fmt(naive, 0)} ms naive (JSON.parse x2)`,
        ratio: scan / naive,
        ratioOf: "scan / naive",
      },
      { case: "scan", measure: "  per task", value: `${fmt(scan / TASKS, 3)} ms` },
    ]),
  );
  console.log(
    `runs (ms): scan ${runs.scan.map((x) => fmt(x, 0)).join(" ")}, naive ${runs.naive.map((x) => fmt(x, 0)).join(" ")}`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
