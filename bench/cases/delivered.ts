/**
 * Case "delivered": issue 29's cost constraint, "the counting must not make the backfill or the idle
 * pass slower by more than 10 %", measured in ONE run with two builds of the same sources, interleaved:
 *   - after: this tree's CLI (bin/cline-otel.js, or CLINE_OTEL_BENCH_BIN);
 *   - before: the same sources with bench/lib/counting-off.patch applied (the adapters scan no edit
 *     text, path or command line and emit no edit, active time, commit, pull request or session
 *     start), built into the run's temp dir with this tree's node_modules (or CLINE_OTEL_BENCH_BEFORE_BIN).
 * Rows, each after / before (wall ratio of medians, CPU ratio beside it): cold `report` (a fresh
 * ledger: the backfill) of 10,000 sessions and of 10,000 tasks, the idle `report` of each (an idle pass
 * that finds nothing new, then the report), and the idle `run` daemon's CPU per minute on each.
 * The corpora are the ratios case's (bench/lib/corpus.ts, bench/lib/task-corpus.ts), with real-shaped
 * edits, denials and commits.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type Corpus, smallSessionsSpec, writeCorpus } from "../lib/corpus.ts";
import type { Sizes } from "../lib/options.ts";
import { buildPatched } from "../lib/patched-build.ts";
import { atMost, type CaseResult, type Row } from "../lib/report.ts";
import { fmt, interleave, MiB, median } from "../lib/stats.ts";
import { type TaskCorpus, taskStatWalk, writeTaskCorpus } from "../lib/task-corpus.ts";
import { statWalk } from "../lib/walk.ts";
import { BIN, cleanEnv, runNode } from "./cli.ts";
import { type DaemonMinute, daemonMinute } from "./ratios.ts";
import { ROOT } from "./startup.ts";

export const COUNTING_OFF_PATCH = join(ROOT, "bench", "lib", "counting-off.patch");
/** The most the counting may add (issue 29): after / before. */
const MAX_RATIO = 1.1;

/** Builds the "before" CLI in `dir`: this tree's sources with the counting-off patch (bench/lib/patched-build.ts). */
export function buildCountingOff(dir: string): string {
  return buildPatched(dir, COUNTING_OFF_PATCH);
}

export interface DeliveredMeasurement {
  readonly small: { readonly sessions: number; readonly documents: number; readonly bytes: number };
  readonly tasks: { readonly tasks: number; readonly bytes: number };
  readonly before: string;
  readonly runs: Record<string, number[]>;
  readonly cpu: Record<string, number[]>;
  /** Of `cpu`, the main thread's own (the rest is V8's helper threads: marking, scavenges, optimizing compiles). */
  readonly mainCpu: Record<string, number[]>;
  readonly daemons: Record<string, DaemonMinute[]>;
  /** Each build's report of the whole history of each corpus: its totals row. */
  readonly totals: Record<string, string>;
}

export async function measureDelivered(tmp: string, sizes: Sizes): Promise<DeliveredMeasurement> {
  const dir = mkdtempSync(join(tmp, "delivered-"));
  try {
    const before = process.env.CLINE_OTEL_BENCH_BEFORE_BIN ?? buildCountingOff(join(dir, "before"));
    const bins = { after: BIN, before };
    const small: Corpus = writeCorpus(join(dir, "small"), smallSessionsSpec(sizes.cliSessions));
    const tasks: TaskCorpus = writeTaskCorpus(join(dir, "tasks"), sizes.cliSessions);
    const probe = join(dir, "probe.jsonl");
    const envs = {
      small: cleanEnv({ HOME: small.tree.home, OTEL_METRICS_EXPORTER: "none" }),
      tasks: cleanEnv({ HOME: tasks.home, OTEL_METRICS_EXPORTER: "none" }),
    };
    type Build = keyof typeof bins;
    type Which = keyof typeof envs;
    let n = 0;
    const states: Record<string, string> = {};
    const cpu: Record<string, number[]> = {};
    const mainCpu: Record<string, number[]> = {};
    const totals: Record<string, string> = {};
    // report's default window (the last 30 days), as the ratios case: it holds none of the sessions
    // (200 days old), so their idle report is the idle pass; the tasks are recent.
    const report = async (name: string, build: Build, which: Which, state: string): Promise<void> => {
      const r = await runNode([bins[build], "report", "--state-dir", state], envs[which], probe);
      cpu[name] = [...(cpu[name] ?? []), r.probe.cpuMs];
      if (r.probe.mainCpuMs !== null) mainCpu[name] = [...(mainCpu[name] ?? []), r.probe.mainCpuMs];
    };
    const cold = (build: Build, which: Which) => async () => {
      const key = `${which}-${build}`;
      if (states[key] !== undefined) rmSync(states[key], { recursive: true, force: true });
      states[key] = join(dir, `state-${n++}`);
      await report(`${which}Cold-${build}`, build, which, states[key]);
    };
    const idle = (build: Build, which: Which) => () =>
      report(`${which}Idle-${build}`, build, which, states[`${which}-${build}`] as string);
    const coldRuns = await interleave(
      {
        "smallCold-before": cold("before", "small"),
        "smallCold-after": cold("after", "small"),
        "tasksCold-before": cold("before", "tasks"),
        "tasksCold-after": cold("after", "tasks"),
      },
      { reps: sizes.cliReps, warmup: 0 },
    );
    const idleRuns = await interleave(
      {
        "smallIdle-before": idle("before", "small"),
        "smallIdle-after": idle("after", "small"),
        "tasksIdle-before": idle("before", "tasks"),
        "tasksIdle-after": idle("after", "tasks"),
      },
      { reps: sizes.cliReps + 4, warmup: 1 },
    );
    // What each build counted, whole history (not timed): the after build's delivered columns.
    for (const which of ["small", "tasks"] as const)
      for (const build of ["before", "after"] as const) {
        const args = [bins[build], "report", "--no-collect", "--since", "2000-01-01", "--state-dir"];
        const r = await runNode([...args, states[`${which}-${build}`] as string], envs[which], probe);
        totals[`${which}-${build}`] = r.stdout.trim().split("\n").at(-1) ?? "";
      }
    // The daemons, one minute each, in the order after, before, before, after (a load drift hits both).
    const walks = {
      small: () => statWalk(small.tree.sessionsDir),
      tasks: () => taskStatWalk(tasks.tasksDir),
    };
    const daemons: Record<string, DaemonMinute[]> = {};
    for (const which of ["small", "tasks"] as const)
      for (const build of ["after", "before", "before", "after"] as const) {
        const m = await daemonMinute(
          envs[which],
          states[`${which}-${build}`] as string,
          sizes.daemonSeconds,
          () => {
            walks[which]();
          },
          bins[build],
        );
        const key = `${which}Daemon-${build}`;
        daemons[key] = [...(daemons[key] ?? []), m];
      }
    return {
      small: { sessions: small.rootIds.length, documents: small.docs.length, bytes: small.bytes },
      tasks: { tasks: tasks.files.length, bytes: tasks.bytes },
      before,
      runs: { ...coldRuns, ...idleRuns },
      cpu,
      mainCpu,
      daemons,
      totals,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function deliveredCase(tmp: string, sizes: Sizes): Promise<CaseResult> {
  const m = await measureDelivered(tmp, sizes);
  const ms = (x: number): string => (x >= 1000 ? `${fmt(x / 1000, 2)} s` : `${fmt(x, 0)} ms`);
  const row = (measure: string, what: string): Row => {
    const a = m.runs[`${what}-after`] ?? [];
    const b = m.runs[`${what}-before`] ?? [];
    const r = median(a) / median(b);
    const of = (x: Record<string, number[]>) => {
      const after = x[`${what}-after`] ?? [];
      const before = x[`${what}-before`] ?? [];
      // No main-thread figure from a Node before 22.15 (bench/lib/rss-probe.mjs).
      if (after.length === 0 || before.length === 0) return "n/a";
      return `${ms(median(after))} / ${ms(median(before))}, ratio ${fmt(median(after) / median(before), 3)}`;
    };
    return {
      case: "delivered",
      measure,
      value: ms(median(a)),
      // The main thread's apart: what of the counting's CPU runs beside it, on V8's helper threads.
      baseline: `${ms(median(b))} before (CPU ${of(m.cpu)}; main thread ${of(m.mainCpu)})`,
      ratio: r,
      ratioOf: "after / before",
      ...atMost(r, MAX_RATIO),
    };
  };
  const daemonCpu = (key: string): number =>
    median((m.daemons[key] ?? []).map((d) => (d.cpuMs * 60) / d.seconds));
  const daemonRow = (measure: string, which: string): Row => {
    const a = daemonCpu(`${which}Daemon-after`);
    const b = daemonCpu(`${which}Daemon-before`);
    // A window shorter than the sweep (--quick: 15 s of a 60 s sweep) measures nothing: no verdict.
    const swept = (key: string) => (m.daemons[key] ?? []).every((x) => x.passes > 0);
    if (!swept(`${which}Daemon-after`) || !swept(`${which}Daemon-before`))
      return {
        case: "delivered",
        measure,
        value: "no sweep in the window",
        baseline: "see --daemon-seconds (a sweep is every 60 s)",
      };
    return {
      case: "delivered",
      measure,
      value: `${fmt(a / 1000, 2)} s CPU/min`,
      baseline: `${fmt(b / 1000, 2)} s CPU/min before`,
      ratio: a / b,
      ratioOf: "after / before (CPU)",
      ...atMost(a / b, MAX_RATIO),
    };
  };
  const smallWhat = `${m.small.sessions} sessions, ${m.small.documents} docs, ${fmt(m.small.bytes / MiB, 0)} MiB`;
  const taskWhat = `${m.tasks.tasks} tasks, ${fmt(m.tasks.bytes / MiB, 0)} MiB`;
  const list = (xs: readonly number[] | undefined): string => (xs ?? []).map((x) => fmt(x, 0)).join(" ");
  const d = (xs: readonly DaemonMinute[] | undefined) =>
    (xs ?? []).map((x) => `${x.passes} passes ${fmt(x.cpuMs / 1000, 2)} s CPU in ${x.seconds} s`).join(", ");
  return {
    name: "delivered",
    rows: [
      row(`cold report (backfill), ${smallWhat}`, "smallCold"),
      row("idle report (idle pass), same sessions", "smallIdle"),
      daemonRow("idle run daemon, same sessions", "small"),
      row(`cold report (backfill), ${taskWhat}`, "tasksCold"),
      row("idle report (idle pass), same tasks", "tasksIdle"),
      daemonRow("idle run daemon, same tasks", "tasks"),
    ],
    notes: [
      `delivered: before = ${m.before}`,
      `delivered: runs (ms, wall; CPU in brackets, the main thread's in braces) ${Object.keys(m.runs)
        .map((k) => `${k} ${list(m.runs[k])} [${list(m.cpu[k])}] {${list(m.mainCpu[k])}}`)
        .join("; ")}`,
      `delivered: daemons ${Object.keys(m.daemons)
        .map((k) => `${k}: ${d(m.daemons[k])}`)
        .join("; ")}`,
      ...Object.entries(m.totals).map(([k, v]) => `delivered: totals ${k}: ${v}`),
    ],
    data: m,
  };
}
