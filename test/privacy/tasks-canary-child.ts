/**
 * Child process for the task-format privacy test: a real collection pass and report over a
 * task-format tree, then a V8 heap snapshot. argv: <home> <stateDir> <snapshotPath> [control]
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeHeapSnapshot } from "node:v8";
import { createClineTasksAdapter } from "../../src/adapter/cline-tasks/adapter.ts";
import { taskRootCandidates } from "../../src/adapter/cline-tasks/paths.ts";
import { runPass } from "../../src/collector/pass.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { printReports } from "./child-report.ts";

const [home, stateDir, snapshot, mode] = process.argv.slice(2) as [
  string,
  string,
  string,
  string | undefined,
];
const keep: unknown[] = [];
const roots = taskRootCandidates({ home, platform: "linux", env: {}, cwd: home });
const ledger = Ledger.open(stateDir);
const pass = await runPass(createClineTasksAdapter(roots), ledger);
keep.push(pass);
printReports(ledger, pass.problems, keep);
if (mode === "control") {
  // Decoding the ordinary way (the document, then its request text): the canary must be seen.
  const doc = JSON.parse(
    readFileSync(join(home, ".cline", "data", "tasks", "1796000000000", "ui_messages.json"), "utf8"),
  );
  keep.push(doc.map((m: { text?: string }) => (m.text?.startsWith("{") ? JSON.parse(m.text) : m.text)));
}
ledger.close();
writeHeapSnapshot(snapshot);
process.stdout.write(`kept ${keep.length}\n`);
