/**
 * Child process for the privacy test: run a real collection and report over a tree,
 * print the report, then write a V8 heap snapshot. It never learns the canary; the
 * parent searches the snapshot, the ledger and the output for it.
 * argv: <home> <stateDir> <snapshotPath> [control]
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeHeapSnapshot } from "node:v8";
import { createClineAdapter } from "../../src/adapter/cline/adapter.ts";
import { collectDocument } from "../../src/adapter/cline/document.ts";
import { resolveClinePaths } from "../../src/adapter/cline/paths.ts";
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
const paths = resolveClinePaths({}, {}, home);
const ledger = Ledger.open(stateDir);
const pass = await runPass(createClineAdapter(paths), ledger);
keep.push(pass);
printReports(ledger, pass.problems, keep);
// The edit records of the document (issue 29), read the way the collector reads it: kept alive for
// the heap snapshot and summarized, so a canary in an edit's text would show in one or the other.
const docPath = join(paths.sessions.path, "1796000000000_canry", "1796000000000_canry.messages.json");
const obs = await collectDocument({ adapterId: "cline", path: docPath, origin: "walk", hint: {} });
const edits = obs.status === "read" ? (obs.edits ?? []) : [];
keep.push(obs);
const n = (d: string) => edits.filter((e) => e.decision === d).length;
const accepted = edits.filter((e) => e.decision === "accepted");
process.stdout.write(
  `edits accepted=${n("accepted")} rejected=${n("rejected")} failed=${n("failed")} added=${accepted.reduce((a, e) => a + e.linesAdded, 0)} removed=${accepted.reduce((a, e) => a + e.linesRemoved, 0)}\n${JSON.stringify(edits)}\n`,
);
if (mode === "control") {
  // The control decodes a document the ordinary way: its snapshot must contain the canary.
  const sessions = paths.sessions.path;
  const id = "1796000000000_canry";
  keep.push(JSON.parse(readFileSync(join(sessions, id, `${id}.messages.json`), "utf8")));
}
ledger.close();
writeHeapSnapshot(snapshot);
process.stdout.write(`kept ${keep.length}\n`);
