/** The benchmark's command line: which cases, at which sizes, how many rounds. */
import { parseArgs } from "node:util";
import { MiB } from "./stats.ts";

export const CASES = [
  "startup",
  "cli",
  "ratios",
  "cold",
  "delivered",
  "scan",
  "backfill",
  "idle",
  "pickup",
  "export",
  "huge",
  "slow",
  "fold",
  "scale",
] as const;
export type CaseName = (typeof CASES)[number];

export interface Sizes {
  readonly scanMB: number;
  readonly scanReps: number;
  readonly backfillSessions: number;
  readonly backfillBytes: number;
  readonly backfillReps: number;
  readonly historySessions: number;
  readonly historyBytesPerSession: number;
  readonly idleReps: number;
  readonly pickupReps: number;
  readonly exportSessions: readonly number[];
  readonly hugeBytes: number;
  readonly hugeReps: number;
  readonly startupReps: number;
  /** The cli case: small sessions, large documents and their bytes, rounds, daemon watch time. */
  readonly cliSessions: number;
  readonly cliLargeDocs: number;
  readonly cliLargeBytes: number;
  readonly cliReps: number;
  readonly daemonSeconds: number;
  /**
   * The ratios case's daemons: measure after V8's memory reducer has run its start-up GCs (the
   * minute a long-running daemon pays; bench/cases/ratios.ts `daemonMinute`).
   */
  readonly daemonSettle: boolean;
  /** The slow case: sessions exported to the throttled backends. */
  readonly slowSessions: number;
  /** The fold case: the two history sizes compared. */
  readonly foldSessions: readonly number[];
  /** The scale case: the history sizes of its `run --once` runs (the daemon runs over the last). */
  readonly scaleSessions: readonly number[];
}

export const FULL: Sizes = {
  scanMB: 70,
  scanReps: 5,
  backfillSessions: 2000,
  backfillBytes: 2 * 1024 * MiB,
  backfillReps: 3,
  historySessions: 10_000,
  historyBytesPerSession: 20 * 1024,
  idleReps: 7,
  pickupReps: 5,
  exportSessions: [1000, 10_000],
  hugeBytes: 1024 * MiB,
  hugeReps: 2,
  startupReps: 15,
  cliSessions: 10_000,
  cliLargeDocs: 240,
  cliLargeBytes: 233 * MiB,
  cliReps: 3,
  // Three safety sweeps, after V8's memory reducer is done with start-up's heap (daemonSettle).
  daemonSeconds: 180,
  daemonSettle: true,
  slowSessions: 10_000,
  foldSessions: [2000, 10_000],
  scaleSessions: [10_000, 30_000],
};

/** A smoke run of every case in about a minute (numbers indicative only). */
export const QUICK: Sizes = {
  scanMB: 20,
  scanReps: 3,
  backfillSessions: 200,
  backfillBytes: 200 * MiB,
  backfillReps: 2,
  historySessions: 1000,
  historyBytesPerSession: 20 * 1024,
  idleReps: 3,
  pickupReps: 3,
  exportSessions: [1000],
  hugeBytes: 200 * MiB,
  hugeReps: 1,
  startupReps: 9,
  cliSessions: 1000,
  cliLargeDocs: 24,
  cliLargeBytes: 24 * MiB,
  cliReps: 2,
  daemonSeconds: 15,
  // A smoke run: the reducer's ~3.5 minutes are not waited for.
  daemonSettle: false,
  slowSessions: 500,
  foldSessions: [500, 2000],
  scaleSessions: [1000, 3000],
};

/** Parses the command line; unknown case names are an error. */
export interface CommandLine {
  readonly cases: CaseName[];
  readonly sizes: Sizes;
  readonly out: string;
  /** `--base-bin`: another build's bin, measured beside this tree's where a case supports it (ratios). */
  readonly baseBin?: string;
  /** `--corpora`: the ratios case's corpora to measure (default all: small, tasks, large). */
  readonly corpora?: readonly Corpus[];
}

export const CORPORA = ["small", "tasks", "large"] as const;
export type Corpus = (typeof CORPORA)[number];

export function parseCommandLine(argv: readonly string[]): CommandLine {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      quick: { type: "boolean", default: false },
      reps: { type: "string" },
      out: { type: "string", default: ".bench-out" },
      "base-bin": { type: "string" },
      "daemon-seconds": { type: "string" },
      corpora: { type: "string" },
    },
  });
  for (const p of positionals) {
    if (!(CASES as readonly string[]).includes(p)) {
      throw new Error(`unknown case "${p}"; cases: ${CASES.join(", ")}`);
    }
  }
  let sizes = values.quick ? QUICK : FULL;
  if (values.reps !== undefined) {
    const n = Number(values.reps);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--reps wants a positive integer, got ${values.reps}`);
    sizes = {
      ...sizes,
      scanReps: n,
      backfillReps: n,
      idleReps: n,
      pickupReps: n,
      hugeReps: n,
      startupReps: n,
      cliReps: n,
    };
  }
  if (values["daemon-seconds"] !== undefined) {
    const n = Number(values["daemon-seconds"]);
    // 0: no daemon rows (the report rows alone).
    if (!Number.isInteger(n) || n < 0)
      throw new Error(`--daemon-seconds wants a whole number of seconds, got ${values["daemon-seconds"]}`);
    sizes = { ...sizes, daemonSeconds: n };
  }
  let corpora: Corpus[] | undefined;
  if (values.corpora !== undefined) {
    const names = values.corpora.split(",").map((c) => c.trim());
    const bad = names.filter((c) => !(CORPORA as readonly string[]).includes(c));
    if (bad.length > 0 || names.length === 0)
      throw new Error(`--corpora wants a list of ${CORPORA.join(", ")}, got ${values.corpora}`);
    corpora = CORPORA.filter((c) => names.includes(c));
  }
  const cases = positionals.length === 0 ? [...CASES] : CASES.filter((c) => positionals.includes(c));
  const baseBin = values["base-bin"];
  return {
    cases,
    sizes,
    out: values.out as string,
    ...(baseBin !== undefined ? { baseBin } : {}),
    ...(corpora !== undefined ? { corpora } : {}),
  };
}
