import type { Command } from "commander";
import { ENV } from "../adapter/cline/paths.ts";
import type { Problem } from "../adapter/types.ts";
import {
  type Config,
  ConfigError,
  type Flags,
  type LocalConfig,
  resolveConfig,
  resolveLocalConfig,
} from "../config/config.ts";

/** Options every command accepts. */
export function withGlobalOptions(cmd: Command): Command {
  // Subcommands made with `new Command` do not inherit exitOverride: set it here so
  // usage errors reach main() and exit 2.
  return cmd
    .exitOverride()
    .option("--cline-dir <dir>", `Cline root (default: $${ENV.dir} or ~/.cline)`)
    .option("--data-dir <dir>", `Cline data dir (default: $${ENV.dataDir} or <root>/data)`)
    .option(
      "--sessions-dir <dir>",
      `Cline sessions dir itself (default: $${ENV.sessionDataDir} or <data>/sessions)`,
    )
    .option("--db-dir <dir>", `dir holding sessions.db (default: $${ENV.dbDataDir} or <data>/db)`)
    .option(
      "--state-dir <dir>",
      "cline-otel ledger dir (default: $CLINE_OTEL_STATE_DIR or $XDG_STATE_HOME/cline-otel)",
    )
    .option("--log-level <level>", "error | warn | info | debug (default: $CLINE_OTEL_LOG_LEVEL or info)")
    .option(
      "--task-root <dir>",
      "also read this task-format root (a dir holding tasks/; repeatable; default: $CLINE_OTEL_TASK_ROOTS)",
      repeatable,
    )
    .option(
      "--skip-task-root <dir>",
      "do not read this task-format root (repeatable; default: $CLINE_OTEL_SKIP_TASK_ROOTS)",
      repeatable,
    )
    .option(
      "--only-task-roots",
      "read only the --task-root roots, none of the default ones (default: $CLINE_OTEL_ONLY_TASK_ROOTS)",
    );
}

function repeatable(value: string, previous: readonly string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function configFrom(cmd: Command, env: NodeJS.ProcessEnv = process.env): Config {
  return resolveConfig(cmd.optsWithGlobals() as Flags, env);
}

/** For the commands that never export: exporter settings are neither read nor checked. */
export function localConfigFrom(cmd: Command, env: NodeJS.ProcessEnv = process.env): LocalConfig {
  return resolveLocalConfig(cmd.optsWithGlobals() as Flags, env);
}

/** The `--check-ledger` option of the commands that open the ledger. */
export const CHECK_LEDGER_OPTION = [
  "--check-ledger",
  "verify the whole ledger (PRAGMA quick_check) before using it; done anyway after an unclean shutdown",
] as const;

/**
 * How `run` and `report` open the ledger: what a NEW ledger's instance id is derived from (this
 * host and the Cline directories, so a rebuilt ledger keeps its identity), whether to check
 * its integrity now, and the quiet time its commits apply. Plain data: the ledger module loads only when a command opens it.
 */
export function ledgerOpenOptions(
  config: LocalConfig,
  opts: { checkLedger?: boolean },
): { identity: readonly string[]; integrityCheck: "always" | "auto"; quietMs: number } {
  return {
    identity: [config.cline.sessions.path, config.cline.db.path],
    integrityCheck: opts.checkLedger ? "always" : "auto",
    quietMs: config.quietMs,
  };
}

/** Exit codes: 2 for bad usage/configuration (fix the command), 1 for runtime failures. */
export function exitCodeFor(e: unknown): number {
  return e instanceof ConfigError ? 2 : 1;
}

/** A runtime failure whose message already says what happened and what to do: no stack, exit 1. */
export class ReportedError extends Error {
  override name = "ReportedError";
}

export function describeError(e: unknown): string {
  if (e instanceof ConfigError || e instanceof ReportedError || isLedgerError(e))
    return `cline-otel: ${e.message}`;
  return `cline-otel: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`;
}

/**
 * A LedgerError, recognised by name: importing the class would load the ledger (and
 * better-sqlite3) into every command, `--version` included.
 */
function isLedgerError(e: unknown): e is Error {
  return e instanceof Error && e.name === "LedgerError";
}

/** One line per problem code with a count and an example path: counted, never silent. */
export function summarizeProblems(problems: readonly Problem[]): string[] {
  const byCode = new Map<string, { n: number; example: Problem }>();
  for (const p of problems) {
    const e = byCode.get(p.code);
    if (e) e.n++;
    else byCode.set(p.code, { n: 1, example: p });
  }
  return [...byCode.entries()].map(
    ([code, { n, example }]) => `${code}: ${n} (e.g. ${example.path}: ${example.detail})`,
  );
}
