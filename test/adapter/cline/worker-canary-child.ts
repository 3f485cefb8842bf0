/**
 * Child process for the worker privacy test: read documents through the background reader's
 * worker thread, keep what it returns, then write the heap snapshots of the worker and of this
 * thread. It never learns the canary; the parent searches both snapshots for it.
 * argv: <sessionsDir> <mainSnapshot> <workerSnapshot> [control]
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeHeapSnapshot } from "node:v8";
import { BackgroundReader } from "../../../src/adapter/cline/background-reader.ts";
import type { Source } from "../../../src/adapter/types.ts";

const [sessions, mainSnapshot, workerSnapshot, mode] = process.argv.slice(2) as [
  string,
  string,
  string,
  string?,
];
const sources: Source[] = readdirSync(sessions).flatMap((id) =>
  readdirSync(join(sessions, id))
    .filter((f) => f.endsWith(".messages.json"))
    .map((f) => ({ adapterId: "cline", path: join(sessions, id, f), origin: "walk" as const, hint: {} })),
);
const keep: unknown[] = [];
const reader = new BackgroundReader({ minInFlight: 1 });
// Whatever the machine's load: this test is about the worker.
reader.spareCore = () => true;
keep.push(await Promise.all(sources.map((s) => reader.collect(s, undefined))));
writeFileSync(workerSnapshot, (await reader.heapSnapshot()) ?? Buffer.alloc(0));
const stats = reader.stats;
await reader.close();
if (mode === "control") {
  // The control decodes a document the ordinary way: its snapshot must contain the canary.
  keep.push(JSON.parse(readFileSync(sources[0]?.path as string, "utf8")));
}
writeHeapSnapshot(mainSnapshot);
process.stdout.write(`${JSON.stringify({ ...stats, kept: keep.length, sources: sources.length })}\n`);
