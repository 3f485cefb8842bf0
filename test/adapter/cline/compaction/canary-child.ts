/**
 * Child process for the compaction privacy test: collect a tree whose session has a poisoned
 * `<id>.compaction.json`, print what a user would see (the compaction rows, the report), then
 * write a V8 heap snapshot. It never learns the canary; the parent searches for it.
 * argv: <home> <sessionId> <stateDir> <snapshotPath> [control]
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeHeapSnapshot } from "node:v8";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { createClineAdapter } from "../../../../src/adapter/cline/adapter.ts";
import { compactionDocumentSchema } from "../../../../src/adapter/cline/compaction/schema.ts";
import { resolveClinePaths } from "../../../../src/adapter/cline/paths.ts";
import { runPass } from "../../../../src/collector/pass.ts";
import { catalogPriceTable } from "../../../../src/cost/index.ts";
import { toLogRecord } from "../../../../src/export/events/records.ts";
import { buildPriceLookup } from "../../../../src/export/price-lookup.ts";
import { toSpan } from "../../../../src/export/traces/spans.ts";
import { Ledger } from "../../../../src/ledger/ledger.ts";
import { buildReport, renderTable } from "../../../../src/report/report.ts";
import { scanFile } from "../../../../src/scan/scanner.ts";

const [home, id, stateDir, snapshot, mode] = process.argv.slice(2) as [
  string,
  string,
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
// Keep everything the allow-list decoded alive, so a field it should not decode would be in the
// snapshot (a decoded-then-dropped string could be collected before the snapshot is written).
const file = join(paths.sessions.path, id, `${id}.compaction.json`);
keep.push((await scanFile(file, compactionDocumentSchema)).value);
const rows = ledger.compactionRows();
keep.push(rows, ledger.compactionSeries());
process.stdout.write(`${JSON.stringify(rows)}\n${JSON.stringify(ledger.compactionSeries())}\n`);
const report = buildReport(ledger, [], catalogPriceTable());
keep.push(report);
process.stdout.write(`${renderTable(report)}\n${JSON.stringify(pass.problems)}\n`);
// The cline.compaction event and span as the exporters build them from the ledger's queue.
const signals = ledger.signals;
if (signals === undefined) throw new Error("a writer has the signal queue");
const queued = signals.batch(signals.cursor("canary", 0), new Set(["compaction"]), 1000).rows;
const ctx = {
  resource: resourceFromAttributes({}),
  scope: { name: "cline-otel" },
  project: "path" as const,
  priceOf: buildPriceLookup(undefined),
};
const records = queued.map((r) => toLogRecord(r, ctx, Date.now()));
const spans = queued.map((r) => toSpan(r, ctx));
keep.push(queued, records, spans);
process.stdout.write(
  `signals ${JSON.stringify({ records: records.map((r) => r?.attributes), spans: spans.map((s) => s.attributes) })}\n`,
);
if (mode === "control") {
  keep.push(JSON.parse(readFileSync(file, "utf8")));
}
ledger.close();
writeHeapSnapshot(snapshot);
process.stdout.write(`kept ${keep.length}\n`);
