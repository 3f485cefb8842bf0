/**
 * Child process for the captures privacy test: collect a capture dir (with the messages
 * surface), build and print `report --captures` and the exported metric data, then write a V8
 * heap snapshot. It never learns the canary; the parent searches the snapshot, the ledger and
 * the output for it.
 * argv: <home> <captureDir> <stateDir> <snapshotPath> [control]
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeHeapSnapshot } from "node:v8";
import { createClineSurfaces } from "../../../../src/adapter/cline/captures/collect.ts";
import { resolveCaptureDirs } from "../../../../src/adapter/cline/captures/paths.ts";
import { resolveClinePaths } from "../../../../src/adapter/cline/paths.ts";
import { runPass } from "../../../../src/collector/pass.ts";
import { captureSeriesToMetricData } from "../../../../src/export/captures.ts";
import { Ledger } from "../../../../src/ledger/ledger.ts";
import { buildCapturesReport, renderCapturesTable } from "../../../../src/report/captures.ts";

const [home, captureDir, stateDir, snapshot, mode] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string | undefined,
];
const keep: unknown[] = [];
const cline = resolveClinePaths({}, {}, home);
const ledger = Ledger.open(stateDir);
const pass = await runPass(createClineSurfaces(cline, resolveCaptureDirs({ captureDir }, {}, cline)), ledger);
keep.push(pass);
const report = buildCapturesReport(ledger.captureRows());
keep.push(report);
process.stdout.write(`${renderCapturesTable(report)}\n${JSON.stringify(report)}\n`);
const metrics = captureSeriesToMetricData(ledger.captureSeries(), {
  project: "path",
  includeSessionId: true,
  temporality: "cumulative",
  startTime: [1, 0],
  endTime: [2, 0],
});
keep.push(metrics);
process.stdout.write(`${JSON.stringify(metrics)}\n${JSON.stringify(pass.problems)}\n`);
if (mode === "control") {
  // The control decodes the captures the ordinary way: its snapshot must contain the canary.
  for (const f of readdirSync(captureDir)) keep.push(JSON.parse(readFileSync(join(captureDir, f), "utf8")));
}
ledger.close();
writeHeapSnapshot(snapshot);
process.stdout.write(`kept ${keep.length}\n`);
