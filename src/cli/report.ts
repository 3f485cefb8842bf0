import { Command, Option } from "commander";
import type { Ledger } from "../ledger/ledger.ts";
import { GROUP_DIMS, SORT_KEYS } from "../report/dims.ts";
import type { ReportFlags } from "../report/options.ts";
import { PERIODS } from "../report/time/periods.ts";
import { choiceListOption } from "./choice-list.ts";
import {
  CHECK_LEDGER_OPTION,
  ledgerOpenOptions,
  localConfigFrom,
  summarizeProblems,
  withGlobalOptions,
} from "./common.ts";
import { noClineDataMessage } from "./no-data.ts";
import { createProgress } from "./progress.ts";

export function reportCommand(): Command {
  const cmd = new Command("report")
    .description("collect once (incremental), then print usage from the ledger")
    .addOption(
      choiceListOption(
        "--by <dim...>",
        "group rows by one or more dimensions",
        GROUP_DIMS,
        "report dimension",
      ),
    )
    .option(
      "--since <when>",
      "from this date (2026-11-30), date-time (2026-11-30T14:00, local to --timezone, or with Z/+01:00), today, yesterday, or relative (7d = the last 7 days, 24h)",
    )
    .option(
      "--until <when>",
      "up to and including this date (same forms as --since; a date-time is exclusive)",
    )
    .option("--timezone <iana>", "time zone of days, weeks, months and dates (default: the local zone)")
    .option("--json", "print one JSON object { rows, totals } instead of a table")
    .option(
      "--csv",
      "print CSV: a header row and one row per group, numbers unformatted (see docs/report.md)",
    )
    .option("--top <n>", "keep the N largest rows (by --sort, default cost); the rest are summed in one row")
    .addOption(new Option("--sort <key>", "order rows by this, largest first").choices(SORT_KEYS))
    .option("--budget <usd>", "check spend in the current --period against this budget; exit 3 when over")
    .addOption(new Option("--period <period>", "the budget's period (default: day)").choices(PERIODS))
    .option("--prices <file>", "price overrides (JSON, see docs/prices.md; default: $CLINE_OTEL_PRICES)")
    .option("--no-collect", "only read the ledger; do not look at Cline's files first")
    .option(...CHECK_LEDGER_OPTION)
    .option(
      "--captures",
      "show Cline's provider-request captures instead: per session and iteration, each stage's estimated tokens and bytes and their growth",
    )
    .option(
      "--capture-dir <dir>",
      "also read captures here (default: $CLINE_OTEL_CAPTURE_DIR; always: $CLINE_CAPTURE_DIR or $CLINE_DATA_DIR/provider-request-captures, and <data>/provider-request-captures)",
    );
  withGlobalOptions(cmd);
  cmd.action(async (opts: ReportFlags & { collect: boolean; captures?: boolean; checkLedger?: boolean }) => {
    const config = localConfigFrom(cmd);
    const { resolveReportView } = await import("../report/options.ts");
    // Resolved before any work, so a bad flag exits 2 without touching the ledger.
    const view = resolveReportView(opts, Date.now());
    if (opts.captures) {
      const flag = (["since", "until", "csv", "top", "sort", "budget"] as const).find(
        (k) => opts[k] !== undefined,
      );
      if (flag !== undefined) {
        const { ConfigError } = await import("../config/config.ts");
        throw new ConfigError(
          `--${flag}: not available with --captures, which shows every capture in the ledger`,
        );
      }
    }
    // Loaded here, not at the top: `--version`, `--help` and `paths` need none of this.
    const [{ loadSurfaces }, { runPass }, { Ledger, LedgerError }, captures, report] = await Promise.all([
      import("./surfaces.ts"),
      import("../collector/pass.ts"),
      import("../ledger/ledger.ts"),
      import("../report/captures.ts"),
      import("../report/report.ts"),
    ]);
    const { printReport } = await import("./report-output.ts");
    // A price file is read (and a bad one refused, exit 2) before any work; Cline's own catalog
    // only when a row of the report needs a price.
    const loadPrices = async () => (await import("../cost/table.ts")).priceTableFor(config.prices);
    const userPrices = config.prices !== undefined ? await loadPrices() : undefined;
    const missing = noClineDataMessage(config);
    if (missing !== undefined) process.stderr.write(`${missing}\n`);
    let ledger: Ledger;
    let collect = opts.collect;
    try {
      ledger = Ledger.open(config.stateDir.path, ledgerOpenOptions(config, opts));
    } catch (e) {
      // A running daemon owns the ledger: show its data rather than fail.
      if (!(e instanceof LedgerError && e.code === "locked")) throw e;
      process.stderr.write(`note: ${e.message}\nshowing the ledger as the running process last wrote it.\n`);
      ledger = Ledger.open(config.stateDir.path, { ...ledgerOpenOptions(config, opts), readOnly: true });
      collect = false;
    }
    try {
      if (collect) {
        const progress = createProgress(process.stderr, "collecting");
        const adapter = (await loadSurfaces())(config, ledger.listings, { onePass: true });
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
        const rows = captures.buildCapturesReport(ledger.captureRows());
        if (opts.json) process.stdout.write(`${JSON.stringify(rows)}\n`);
        else process.stdout.write(`${captures.renderCapturesTable(rows)}\n`);
        return;
      }
      const reportOpts = {
        fromMs: view.fromMs,
        toMs: view.toMs,
        zone: view.zone,
        sort: view.sort,
        top: view.top,
      };
      const built =
        (userPrices === undefined
          ? report.buildReportWithoutPrices(ledger, view.by, reportOpts)
          : undefined) ?? report.buildReport(ledger, view.by, userPrices ?? (await loadPrices()), reportOpts);
      const out = printReport(view, built);
      process.stdout.write(out.text);
      // Exit 3 when over budget: usable from cron or a shell prompt.
      if (out.overBudget) process.exitCode = 3;
    } finally {
      ledger.close();
    }
  });
  return cmd;
}
