import { Command, Option } from "commander";
import { createClineSurfaces } from "../adapter/cline/captures/collect.ts";
import { runPass } from "../collector/pass.ts";
import { priceTableFor } from "../cost/table.ts";
import { type GroupDim, Ledger, LedgerError } from "../ledger/ledger.ts";
import { buildCapturesReport, renderCapturesTable } from "../report/captures.ts";
import { buildReport, GROUP_DIMS, renderTable } from "../report/report.ts";
import { configFrom, noClineDataMessage, summarizeProblems, withGlobalOptions } from "./common.ts";
import { createProgress } from "./progress.ts";

export function reportCommand(): Command {
  const cmd = new Command("report")
    .description("collect once (incremental), then print usage from the ledger")
    .addOption(
      new Option("--by <dim...>", "group rows by one or more dimensions")
        .choices(GROUP_DIMS as string[])
        .default([]),
    )
    .option("--json", "print one JSON object { rows, totals } instead of a table")
    .option("--prices <file>", "price overrides (JSON, see docs/prices.md; default: $CLINE_OTEL_PRICES)")
    .option("--no-collect", "only read the ledger; do not look at Cline's files first")
    .option(
      "--captures",
      "show Cline's provider-request captures instead: per session and iteration, each stage's estimated tokens and bytes and their growth",
    )
    .option(
      "--capture-dir <dir>",
      "also read captures here (default: $CLINE_OTEL_CAPTURE_DIR; always: $CLINE_CAPTURE_DIR or $CLINE_DATA_DIR/provider-request-captures, and <data>/provider-request-captures)",
    );
  withGlobalOptions(cmd);
  cmd.action(async (opts: { by: GroupDim[]; json?: boolean; collect: boolean; captures?: boolean }) => {
    const config = configFrom(cmd);
    const prices = priceTableFor(config.prices);
    const missing = noClineDataMessage(config);
    if (missing !== undefined) process.stderr.write(`${missing}\n`);
    let ledger: Ledger;
    let collect = opts.collect;
    try {
      ledger = Ledger.open(config.stateDir.path);
    } catch (e) {
      // A running daemon owns the ledger: show its data rather than fail.
      if (!(e instanceof LedgerError && e.code === "locked")) throw e;
      process.stderr.write(`note: ${e.message}\nshowing the ledger as the running process last wrote it.\n`);
      ledger = Ledger.open(config.stateDir.path, { readOnly: true });
      collect = false;
    }
    try {
      if (collect) {
        const progress = createProgress(process.stderr, "collecting");
        const adapter = createClineSurfaces(config.cline, config.captureDirs, ledger);
        const pass = await runPass(adapter, ledger, { onProgress: progress.update });
        progress.finish();
        const lines = summarizeProblems(pass.problems);
        if (lines.length > 0) {
          process.stderr.write(
            `skipped or rejected (counted, see --log-level debug for all):\n  ${lines.join("\n  ")}\n`,
          );
        }
      }
      if (opts.captures) {
        const captures = buildCapturesReport(ledger.captureRows());
        if (opts.json) process.stdout.write(`${JSON.stringify(captures)}\n`);
        else process.stdout.write(`${renderCapturesTable(captures)}\n`);
        return;
      }
      const report = buildReport(ledger, opts.by, prices);
      if (opts.json)
        process.stdout.write(`${JSON.stringify({ rows: report.rows, totals: report.totals })}\n`);
      else process.stdout.write(`${renderTable(report)}\n`);
    } finally {
      ledger.close();
    }
  });
  return cmd;
}
