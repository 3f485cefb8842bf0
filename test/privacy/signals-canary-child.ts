/**
 * Child process for the privacy test of the three signals: collect a poisoned tree, export
 * metrics, events (logs) and spans through the real OTLP exporters, in http/json and then
 * http/protobuf, to an in-process receiver; print everything it received (decoded), then write
 * a V8 heap snapshot. It never learns the canary: the parent searches output, ledger and heap.
 * argv: <home> [tasks] <stateDir> <snapshotPath> (`tasks`: a task-format tree)
 */
import { writeHeapSnapshot } from "node:v8";
import { createClineAdapter } from "../../src/adapter/cline/adapter.ts";
import { resolveClinePaths } from "../../src/adapter/cline/paths.ts";
import { createClineTasksAdapter } from "../../src/adapter/cline-tasks/adapter.ts";
import { taskRootCandidates } from "../../src/adapter/cline-tasks/paths.ts";
import { runPass } from "../../src/collector/pass.ts";
import { resolveConfig } from "../../src/config/config.ts";
import { ExportPipeline } from "../../src/export/pipeline.ts";
import { buildPriceLookup } from "../../src/export/price-lookup.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { createLogger } from "../../src/util/log.ts";
import { startReceiver } from "../export/helpers/otlp-receiver.ts";

// `<home> [tasks] <stateDir> <snapshot> <control>`: `tasks` reads the task format's roots instead.
const argv = process.argv.slice(2);
const [home, stateDir, snapshot] = [argv[0], argv.at(-3), argv.at(-2)] as [string, string, string];
const tasks = argv.length === 5 && argv[1] === "tasks";
const keep: unknown[] = [];
const ledger = Ledger.open(stateDir);
const adapter = tasks
  ? createClineTasksAdapter(taskRootCandidates({ home, platform: "linux", env: {}, cwd: home }))
  : createClineAdapter(resolveClinePaths({}, {}, home));
keep.push(await runPass(adapter, ledger));
const rx = await startReceiver();
const lines: string[] = [];
for (const protocol of ["http/json", "http/protobuf"]) {
  const cfg = resolveConfig(
    { stateDir },
    {
      OTEL_METRICS_EXPORTER: "otlp",
      OTEL_LOGS_EXPORTER: "otlp",
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_METRIC_EXPORT_INTERVAL: "3600000",
      OTEL_EXPORTER_OTLP_ENDPOINT: `${rx.baseUrl}/${protocol.replace("/", "-")}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    },
    home,
    home,
  );
  const p = await ExportPipeline.start(cfg.export, ledger, {
    logger: createLogger("debug", (l) => lines.push(l)),
    priceOf: buildPriceLookup(undefined),
    serviceVersion: "9.9.9",
  });
  const outcome = await p.shutdown();
  lines.push(JSON.stringify(outcome));
}
const big = (_k: string, v: unknown) => (typeof v === "bigint" ? v.toString() : v);
process.stdout.write(`${JSON.stringify({ logs: rx.logs, spans: rx.spans, points: rx.points }, big)}\n`);
process.stdout.write(`${lines.join("\n")}\n`);
process.stdout.write(
  `received ${rx.logs.length} records, ${rx.spans.length} spans, ${rx.points.length} points in ${rx.requests.length} requests\n`,
);
keep.push(rx.requests);
await rx.close();
ledger.close();
writeHeapSnapshot(snapshot);
process.stdout.write(`kept ${keep.length}\n`);
