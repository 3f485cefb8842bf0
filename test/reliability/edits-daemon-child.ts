/**
 * A daemon of the generic side over the test edits adapter (test/helpers/edits-adapter.ts): pass,
 * export (metrics and events over OTLP/HTTP), again, until killed; with `once`, one pass, a flush
 * and a clean shutdown (what `run --once` does). The parent kills it with SIGKILL at random moments.
 * argv: <stateDir> <worldDir> <receiverBaseUrl> <temporality> <baseMs> [once]
 */
import { setTimeout as sleep } from "node:timers/promises";
import { runPass } from "../../src/collector/pass.ts";
import { ExportPipeline } from "../../src/export/pipeline.ts";
import { buildPriceLookup } from "../../src/export/price-lookup.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { createLogger } from "../../src/util/log.ts";
import { exportTestConfig } from "../export/helpers/config.ts";
import { editsAdapter } from "../helpers/edits-adapter.ts";

const [stateDir, world, base, temporality, baseMs, once] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string | undefined,
];
const cfg = exportTestConfig({
  OTEL_METRICS_EXPORTER: "otlp",
  OTEL_LOGS_EXPORTER: "otlp",
  OTEL_EXPORTER_OTLP_ENDPOINT: base,
  OTEL_EXPORTER_OTLP_TIMEOUT: "1500",
  OTEL_METRIC_EXPORT_INTERVAL: "200",
  OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: temporality,
});
const ledger = Ledger.open(stateDir);
const logger = createLogger("warn", (l) => process.stderr.write(`${l}\n`));
const pipeline = await ExportPipeline.start(cfg.export, ledger, {
  logger,
  priceOf: buildPriceLookup(undefined),
  serviceVersion: "9.9.9",
  // Small windows and pages: a kill lands between many of them.
  windowRows: 7,
  pagePoints: 12,
});
const adapter = editsAdapter(world, Number(baseMs));
if (once === "once") {
  await runPass(adapter, ledger);
  const outcome = await pipeline.shutdown();
  ledger.close();
  process.stdout.write(`${JSON.stringify(outcome)}\n`);
  process.exit(outcome.ok ? 0 : 1);
}
for (;;) {
  await runPass(adapter, ledger);
  await pipeline.flush();
  await sleep(30);
}
