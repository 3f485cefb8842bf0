import { Command, Option } from "commander";
import type { Config } from "../config/config.ts";
import type { ExportPipeline, FlushOutcome } from "../export/pipeline.ts";
import type { Ledger } from "../ledger/ledger.ts";
import { createLogger, type Logger } from "../util/log.ts";
import {
  CHECK_LEDGER_OPTION,
  configFrom,
  ledgerOpenOptions,
  ReportedError,
  withGlobalOptions,
} from "./common.ts";
import { noClineDataMessage } from "./no-data.ts";
import { createProgress } from "./progress.ts";
import { packageVersion } from "./version.ts";

/** After the SDK has shut down, anything still holding the process (a stuck socket) gets this long. */
const EXIT_GRACE_MS = 3000;

export function runCommand(): Command {
  const cmd = new Command("run")
    .description("collect continuously (watching Cline's files) and export OTLP / Prometheus metrics")
    .option("--once", "one pass, export, flush and exit (exit 1 if the export was not delivered)")
    .option(...CHECK_LEDGER_OPTION)
    .option(
      "--poll-interval <seconds>",
      "poll Cline's files this often (default: $CLINE_OTEL_POLL_INTERVAL or 5)",
    )
    .addOption(new Option("--watch", "watch Cline's directories (default)").hideHelp())
    .option("--no-watch", "do not watch the filesystem; rely on polling only")
    .addOption(
      new Option(
        "--project <mode>",
        "cline.project attribute: path | basename | hash | none (default: path)",
      ),
    )
    .addOption(new Option("--session-id", "put session.id on metric series (the default)").hideHelp())
    .option(
      "--no-session-id",
      "leave session.id off metric series, as a team's shared backend needs (default: $OTEL_METRICS_INCLUDE_SESSION_ID or true; events and spans always carry it)",
    )
    .option(
      "--prices <file>",
      "JSON price file merged over the bundled catalog (default: $CLINE_OTEL_PRICES)",
    )
    .option(
      "--capture-dir <dir>",
      "also read Cline's provider-request captures here (default: $CLINE_OTEL_CAPTURE_DIR)",
    )
    .option(
      "--headers-file <file>",
      "OTLP headers (API keys) as name=value lines, mode 0600, kept out of the shell that runs cline (default: $CLINE_OTEL_HEADERS_FILE)",
    );
  withGlobalOptions(cmd);
  cmd.action(async (opts: { once?: boolean; checkLedger?: boolean }) => {
    const config = configFrom(cmd);
    const logger = createLogger(config.logLevel);
    // The SDK, the exporters and the price catalog load here, not at start-up (`--version`, `paths`).
    const [{ DiagLogLevel, diag }, { ExportPipeline }, { buildPriceLookup }, { EndpointError }, { Ledger }] =
      await Promise.all([
        import("@opentelemetry/api"),
        import("../export/pipeline.ts"),
        import("../export/price-lookup.ts"),
        import("../export/prometheus.ts"),
        import("../ledger/ledger.ts"),
      ]);
    if (config.logLevel === "debug") diag.setLogger(diagTo(logger), DiagLogLevel.INFO);
    const priceOf = buildPriceLookup(config.prices);
    const missing = noClineDataMessage(config);
    if (missing !== undefined)
      logger.warn(opts.once ? missing : `${missing}\nWaiting for Cline to write data.`);
    const ledger = Ledger.open(config.stateDir.path, ledgerOpenOptions(config, opts));
    // Once everything is flushed and closed, a lingering handle must not keep the process alive.
    const graceExit = () => setTimeout(() => process.exit(), EXIT_GRACE_MS).unref();
    const exporting = createProgress(process.stderr, "exporting", 20, { unit: "series" });
    try {
      const pipeline = await ExportPipeline.start(config.export, ledger, {
        logger,
        priceOf,
        serviceVersion: packageVersion(),
        // A long first export in pages: series delivered of the pass's total, and the rate.
        onProgress: (_target, p, startedMs) => {
          if (p.total === undefined) return;
          const s = (Date.now() - startedMs) / 1000;
          exporting.update(p.delivered, p.total, s > 0 ? p.delivered / s : undefined);
        },
      }).catch((e: unknown) => {
        throw e instanceof EndpointError ? new ReportedError(e.message) : e;
      });
      if (opts.once) await runOnce(config, ledger, pipeline, logger);
      else await runDaemon(config, ledger, pipeline, logger);
    } finally {
      exporting.finish();
      // Shutdown waited for every export (bounded by the stop deadline): none can use it now.
      ledger.close();
      graceExit();
    }
  });
  return cmd;
}

async function runOnce(
  config: Config,
  ledger: Ledger,
  pipeline: ExportPipeline,
  logger: Logger,
): Promise<void> {
  const { CollectorLoop, createSurfaces } = await collectionModules();
  const progress = createProgress(process.stderr, "collecting");
  let loop: InstanceType<typeof CollectorLoop> | undefined = new CollectorLoop(
    createSurfaces(config, ledger.listings, { onePass: true }),
    ledger,
    {
      pollIntervalMs: config.pollIntervalMs,
      logger,
      progress,
      onPass: (r) => pipeline.recordPass(r),
    },
  );
  const signals = onStopSignal(() => {
    const s = config.export.timeoutMs / 1000;
    logger.info(
      `stopping after the current document; the final export still runs (no new request after ${s}s; what was delivered is kept)`,
    );
    pipeline.stopWithin(config.export.timeoutMs);
    void loop?.stop();
  });
  try {
    await loop.runOnce();
    // No pass follows: what the adapters keep for the next one (listings, index rows, the last
    // discovery: ~1 KB a document) is let go before the export's peak.
    loop = undefined;
    if (pipeline.prometheusUrl !== undefined) logger.info("--once does not wait for a Prometheus scrape");
    const outcome = await pipeline.shutdown();
    if (!outcome.ok) throw new ReportedError(undelivered(outcome));
  } finally {
    signals.dispose();
  }
}

async function runDaemon(
  config: Config,
  ledger: Ledger,
  pipeline: ExportPipeline,
  logger: Logger,
): Promise<void> {
  const { CollectorLoop, createSurfaces } = await collectionModules();
  const c = config.cline;
  const surfaces = createSurfaces(config, ledger.listings);
  const loop = new CollectorLoop(surfaces, ledger, {
    pollIntervalMs: config.pollIntervalMs,
    logger,
    watch: config.watch ? { plans: surfaces.watchPlans ?? [] } : undefined,
    progress: createProgress(process.stderr, "collecting"),
    onPass: (r) => pipeline.recordPass(r),
  });
  const destinations = pipeline.describe();
  logger.info(
    `cline-otel ${packageVersion()} running: ${config.watch ? "watching" : "polling"} ${c.sessions.path} and ${c.db.path}${
      config.taskRoots.length > 0 ? ` and ${config.taskRoots.length} task-format roots` : ""
    } ` +
      `(poll every ${config.pollIntervalMs / 1000}s); exporting to ${
        destinations.length > 0 ? destinations.join(", ") : "nowhere (OTEL_METRICS_EXPORTER=none)"
      } every ${config.export.intervalMs / 1000}s (${config.export.temporality}); ledger ${ledger.path}`,
  );
  let signals: { dispose(): void } | undefined;
  const stopped = new Promise<void>((resolve) => {
    signals = onStopSignal((sig) => {
      logger.info(
        `${sig}: finishing the current document, then a final export (no new request after ${config.export.timeoutMs / 1000}s)`,
      );
      // Bounded: an export in pages stops after its current request, keeping what was delivered.
      pipeline.stopWithin(config.export.timeoutMs);
      resolve();
    });
  });
  loop.start();
  try {
    await stopped;
    await loop.stop();
    const outcome = await pipeline.shutdown();
    if (!outcome.ok) logger.warn(`final export: ${undelivered(outcome)}`);
    else if (destinations.length > 0) logger.info(`final export delivered to ${destinations.join(", ")}`);
  } finally {
    signals?.dispose();
  }
}

/** The collection side of `run`, loaded when the command runs rather than at start-up. */
async function collectionModules() {
  const [{ loadSurfaces }, { CollectorLoop }] = await Promise.all([
    import("./surfaces.ts"),
    import("../collector/loop.ts"),
  ]);
  return { createSurfaces: await loadSurfaces(), CollectorLoop };
}

function undelivered(outcome: Extract<FlushOutcome, { ok: false }>): string {
  const lines = outcome.failures.map(
    (f) => `could not deliver ${f.signal ?? "metrics"} to ${f.target} (${f.exporter}): ${f.reason}`,
  );
  return `${lines.join("\n")}\nThe ledger keeps everything; the next run sends it.`;
}

/** First SIGINT/SIGTERM: graceful stop. A second one: exit now. */
function onStopSignal(stop: (signal: NodeJS.Signals) => void): { dispose(): void } {
  let stopping = false;
  const handler = (signal: NodeJS.Signals): void => {
    if (stopping) process.exit(130);
    stopping = true;
    stop(signal);
  };
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
  return {
    dispose() {
      process.off("SIGINT", handler);
      process.off("SIGTERM", handler);
    },
  };
}

/** SDK diagnostics (export retries and the like) go to our log at debug level only. */
function diagTo(logger: Logger) {
  const line = (...args: unknown[]) => logger.debug(`otel: ${args.map((a) => String(a)).join(" ")}`);
  return { error: line, warn: line, info: line, debug: line, verbose: line };
}

/** Kept importable from here; one copy, in version.ts. */
export { packageVersion };
