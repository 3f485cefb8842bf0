/**
 * Case "cold": the cold `report` rows of issue 30 (bench/cases/ratios.ts), before and after in ONE
 * run. Two builds of the CLI (this tree's BIN, and CLINE_OTEL_BENCH_BASE_BIN when set: a build of
 * the base commit) each run a cold `report` (fresh ledger) on 10,000 small real-CLI-shaped
 * sessions and on 10,000 task-format tasks, interleaved round by round with each other and with
 * the naive scripts, so a load spell hits every side. Each row prints the wall ratio to the naive
 * script and, beside it, the CPU ratio of the same processes; the "after / before" rows divide the
 * two builds' medians directly (wall and CPU), beside the ledgers' sizes. The tasks come twice:
 * as the ratios case writes them (each ends at a ts in 2033: nothing is ever quiet) and as a
 * history (each ended right after its last request: every document quiet when read).
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { type Corpus, writeCorpus } from "../lib/corpus.ts";
import type { Sizes } from "../lib/options.ts";
import { atMost, type CaseResult, type Row } from "../lib/report.ts";
import { fmt, interleave, MiB, median } from "../lib/stats.ts";
import { type TaskCorpus, writeTaskCorpus } from "../lib/task-corpus.ts";
import { BIN, cleanEnv, runNode } from "./cli.ts";
import { ROOT } from "./startup.ts";

const NAIVE = join(ROOT, "bench", "lib", "naive-read.mjs");
const NAIVE_TASKS = join(ROOT, "bench", "lib", "naive-task-read.mjs");
const DAY_MS = 24 * 3600_000;

/** The build compared against (a before/after run), if any. */
const BASE_BIN = process.env.CLINE_OTEL_BENCH_BASE_BIN;

export async function coldCase(tmp: string, sizes: Sizes): Promise<CaseResult> {
  const dir = mkdtempSync(join(tmp, "cold-"));
  try {
    // The corpora of the ratios case (same generator options and seeds).
    const small: Corpus = writeCorpus(join(dir, "small"), {
      sessions: sizes.cliSessions,
      totalBytes: sizes.cliSessions * 2 * 1024,
      sizeSigma: 0.8,
      maxDocShare: 0.01,
      toolResultMedian: 300,
      systemPromptChars: 5000,
      seed: 15,
      startMs: Date.now() - 200 * DAY_MS,
    });
    const tasks: TaskCorpus = writeTaskCorpus(join(dir, "tasks"), sizes.cliSessions);
    const quiet: TaskCorpus = writeTaskCorpus(join(dir, "quiet"), sizes.cliSessions, undefined, {
      quiet: true,
    });
    const probe = join(dir, "probe.jsonl");
    const smallEnv = cleanEnv({ HOME: small.tree.home, OTEL_METRICS_EXPORTER: "none" });
    const taskEnv = cleanEnv({ HOME: tasks.home, OTEL_METRICS_EXPORTER: "none" });
    const quietEnv = cleanEnv({ HOME: quiet.home, OTEL_METRICS_EXPORTER: "none" });
    const cpu: Record<string, number[]> = {};
    /** Each build's ledger after its cold report (bytes, the database and its WAL). */
    const ledgerBytes: Record<string, number> = {};
    const bytesOf = (f: string): number => {
      try {
        return statSync(f).size;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") return 0;
        throw e;
      }
    };
    let n = 0;
    const timed = async (name: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<void> => {
      const r = await runNode(args, env, probe);
      cpu[name] = [...(cpu[name] ?? []), r.probe.cpuMs];
    };
    const cold = (name: string, bin: string, env: NodeJS.ProcessEnv) => async () => {
      const state = join(dir, `state-${n++}`);
      try {
        await timed(name, [bin, "report", "--state-dir", state], env);
        const db = join(state, "ledger.sqlite");
        ledgerBytes[name] = bytesOf(db) + bytesOf(`${db}-wal`);
      } finally {
        rmSync(state, { recursive: true, force: true });
      }
    };
    const cases: Record<string, () => Promise<void>> = {
      smallAfter: cold("smallAfter", BIN, smallEnv),
      smallNaive: () => timed("smallNaive", [NAIVE, small.tree.sessionsDir], smallEnv),
      tasksAfter: cold("tasksAfter", BIN, taskEnv),
      tasksNaive: () => timed("tasksNaive", [NAIVE_TASKS, tasks.tasksDir], taskEnv),
      quietAfter: cold("quietAfter", BIN, quietEnv),
      quietNaive: () => timed("quietNaive", [NAIVE_TASKS, quiet.tasksDir], quietEnv),
    };
    if (BASE_BIN !== undefined) {
      cases.smallBefore = cold("smallBefore", BASE_BIN, smallEnv);
      cases.tasksBefore = cold("tasksBefore", BASE_BIN, taskEnv);
      cases.quietBefore = cold("quietBefore", BASE_BIN, quietEnv);
    }
    const runs = await interleave(cases, { reps: sizes.cliReps, warmup: 0 });
    const ms = (x: number): string => (x >= 1000 ? `${fmt(x / 1000, 2)} s` : `${fmt(x, 0)} ms`);
    const med = (k: string): number => median(runs[k] ?? []);
    const medCpu = (k: string): number => median(cpu[k] ?? []);
    const ratioRow = (measure: string, a: string, b: string, baseline: string, max: number): Row => {
      const r = med(a) / med(b);
      return {
        case: "cold",
        measure,
        value: ms(med(a)),
        baseline: `${ms(med(b))} ${baseline} (CPU ratio ${fmt(medCpu(a) / medCpu(b), 2)})`,
        ratio: r,
        ratioOf: "report / naive",
        ...atMost(r, max),
      };
    };
    const smallWhat = `${small.rootIds.length} sessions, ${small.docs.length} docs, ${fmt(small.bytes / MiB, 0)} MiB`;
    const taskWhat = `${tasks.files.length} tasks, ${fmt(tasks.bytes / MiB, 0)} MiB`;
    const rows: Row[] = [
      ratioRow(`cold report (this build), ${smallWhat}`, "smallAfter", "smallNaive", "naive", 2),
      ratioRow(
        `cold report (this build), ${taskWhat}`,
        "tasksAfter",
        "tasksNaive",
        "naive (JSON.parse x2)",
        2,
      ),
      ratioRow(
        `cold report (this build), ${taskWhat}, ended (quiet)`,
        "quietAfter",
        "quietNaive",
        "naive (JSON.parse x2)",
        2,
      ),
    ];
    if (BASE_BIN !== undefined) {
      rows.push(
        ratioRow("cold report (base build), same sessions", "smallBefore", "smallNaive", "naive", 2),
        ratioRow(
          "cold report (base build), same tasks",
          "tasksBefore",
          "tasksNaive",
          "naive (JSON.parse x2)",
          2,
        ),
        ratioRow(
          "cold report (base build), same tasks ended (quiet)",
          "quietBefore",
          "quietNaive",
          "naive (JSON.parse x2)",
          2,
        ),
      );
      for (const [what, a, b] of [
        ["sessions", "smallAfter", "smallBefore"],
        ["tasks", "tasksAfter", "tasksBefore"],
        ["tasks ended (quiet)", "quietAfter", "quietBefore"],
      ] as const) {
        const size = `ledger ${fmt((ledgerBytes[a] ?? 0) / MiB, 1)} / ${fmt((ledgerBytes[b] ?? 0) / MiB, 1)} MiB`;
        rows.push({
          case: "cold",
          measure: `cold report, this build / base build, ${what}`,
          value: ms(med(a)),
          baseline: `${ms(med(b))} base (CPU ${ms(medCpu(a))} / ${ms(medCpu(b))} = ${fmt(medCpu(a) / medCpu(b), 2)}; ${size})`,
          ratio: med(a) / med(b),
          ratioOf: "after / before",
        });
      }
    }
    const list = (xs: readonly number[] | undefined): string => (xs ?? []).map((x) => fmt(x, 0)).join(" ");
    return {
      name: "cold",
      rows,
      notes: [
        `cold: base ${BASE_BIN ?? "(none: set CLINE_OTEL_BENCH_BASE_BIN)"}; runs (ms, wall; CPU in brackets) ${Object.keys(
          runs,
        )
          .map((k) => `${k} ${list(runs[k])} [${list(cpu[k])}]`)
          .join("; ")}`,
      ],
      data: { runs, cpu, ledgerBytes, base: BASE_BIN ?? null },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
