/**
 * Case "ratios": issue 30's table, every ratio measured in ONE run, as whole processes of the
 * compiled CLI (`node bin/cline-otel.js`, or CLINE_OTEL_BENCH_BIN) against naive scripts:
 *   - cold `report` (fresh ledger) on 10,000 small real-CLI-shaped sessions vs a naive read +
 *     JSON.parse of every messages document (bench/lib/naive-read.mjs);
 *   - idle `report` (nothing new) vs the same naive script;
 *   - the idle `run` daemon (exporter off, healthy watches): CPU per minute, in units of the CPU of
 *     one readdir + stat walk of the tree (bench/lib/walk.ts);
 *   - cold `report` on 10,000 task-format tasks vs a naive read + double JSON.parse
 *     (bench/lib/naive-task-read.mjs), and the same idle; the task daemon's idle minute in walks;
 *   - 240 large documents, cold and idle `report` vs naive.
 * Each process finds its Cline data through HOME (the corpus' home), as a user's does.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { SWEEP_INTERVAL_MS } from "../../src/collector/loop.ts";
import { type Corpus, smallSessionsSpec, writeCorpus } from "../lib/corpus.ts";
import type { Sizes } from "../lib/options.ts";
import { atMost, type CaseResult, type Row } from "../lib/report.ts";
import { fmt, interleave, MiB, median } from "../lib/stats.ts";
import { type TaskCorpus, taskStatWalk, writeTaskCorpus } from "../lib/task-corpus.ts";
import { statWalk } from "../lib/walk.ts";
import { BIN, cleanEnv, runNode } from "./cli.ts";
import { ROOT } from "./startup.ts";

const NAIVE = join(ROOT, "bench", "lib", "naive-read.mjs");
const NAIVE_TASKS = join(ROOT, "bench", "lib", "naive-task-read.mjs");

export interface DaemonMinute {
  readonly seconds: number;
  readonly passes: number;
  readonly cpuMs: number;
  /** CPU (ms) of one readdir + stat walk of the same tree, median, measured in this process. */
  readonly walkCpuMs: number;
}

export interface RatiosMeasurement {
  readonly small: { readonly sessions: number; readonly documents: number; readonly bytes: number };
  readonly large: { readonly documents: number; readonly bytes: number };
  readonly tasks: { readonly tasks: number; readonly bytes: number };
  readonly runs: Record<string, number[]>;
  readonly cpu: Record<string, number[]>;
  readonly daemon: DaemonMinute;
  readonly taskDaemon: DaemonMinute;
}

/** CPU (ms) of `fn`, median over `reps` runs after one warm-up. */
function cpuOf(fn: () => void, reps: number): number {
  fn();
  const xs: number[] = [];
  for (let i = 0; i < reps; i++) {
    const c = process.cpuUsage();
    fn();
    const d = process.cpuUsage(c);
    xs.push((d.user + d.system) / 1000);
  }
  return median(xs);
}

/** The idle `run` daemon (exporter off) on an already-collected ledger: passes and CPU over `seconds`. */
export async function daemonMinute(
  env: NodeJS.ProcessEnv,
  stateDir: string,
  seconds: number,
  walk: () => void,
  bin = BIN,
): Promise<DaemonMinute> {
  const child: ChildProcess = spawn(
    process.execPath,
    [bin, "run", "--state-dir", stateDir, "--log-level", "debug"],
    {
      env: {
        ...env,
        OTEL_METRICS_EXPORTER: "none",
        OTEL_LOGS_EXPORTER: "none",
        OTEL_TRACES_EXPORTER: "none",
      },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let log = "";
  child.stderr?.on("data", (c: Buffer) => {
    log += c.toString();
  });
  const passes = (): number => (log.match(/\bpass: /g) ?? []).length;
  const cpu = (): number => {
    // utime + stime of the daemon, in clock ticks (100 Hz on Linux).
    const f = readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return (Number(f[11]) + Number(f[12])) * 10;
  };
  try {
    const t0 = Date.now();
    while (passes() === 0) {
      if (Date.now() - t0 > 180_000) throw new Error(`daemon: no first pass in 180 s: ${log.slice(-1000)}`);
      if (child.exitCode !== null) throw new Error(`daemon exited ${child.exitCode}: ${log.slice(-1000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    // The minute measured starts half a sweep after the first pass (watches set, start-up's
    // garbage collected), so it holds exactly one safety sweep (SWEEP_INTERVAL_MS) whatever the jitter.
    await new Promise((r) => setTimeout(r, SWEEP_INTERVAL_MS / 2));
    const p0 = passes();
    const c0 = cpu();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const cpuMs = cpu() - c0;
    const p1 = passes();
    return { seconds, passes: p1 - p0, cpuMs, walkCpuMs: cpuOf(walk, 7) };
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("close", r));
  }
}

export async function measureRatios(tmp: string, sizes: Sizes): Promise<RatiosMeasurement> {
  const dir = mkdtempSync(join(tmp, "ratios-"));
  try {
    const small: Corpus = writeCorpus(join(dir, "small"), smallSessionsSpec(sizes.cliSessions));
    const large: Corpus = writeCorpus(join(dir, "large"), {
      sessions: sizes.cliLargeDocs,
      totalBytes: sizes.cliLargeBytes,
      sizeSigma: 0.6,
      maxDocShare: 0.05,
      subagentShare: 0,
      seed: 16,
    });
    const tasks: TaskCorpus = writeTaskCorpus(join(dir, "tasks"), sizes.cliSessions);
    const probe = join(dir, "probe.jsonl");
    const envOf = (home: string) => cleanEnv({ HOME: home, OTEL_METRICS_EXPORTER: "none" });
    const smallEnv = envOf(small.tree.home);
    const largeEnv = envOf(large.tree.home);
    const taskEnv = envOf(tasks.home);
    let n = 0;
    const fresh = (): string => join(dir, `state-${n++}`);
    const cpu: Record<string, number[]> = {};
    const timed = async (name: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<void> => {
      const r = await runNode(args, env, probe);
      cpu[name] = [...(cpu[name] ?? []), r.probe.cpuMs];
    };
    const report = (name: string, env: NodeJS.ProcessEnv, state: string) =>
      timed(name, [BIN, "report", "--state-dir", state], env);
    const states = { small: "", large: "", tasks: "" };
    const coldOf = (which: keyof typeof states, env: NodeJS.ProcessEnv) => async () => {
      if (states[which] !== "") rmSync(states[which], { recursive: true, force: true });
      states[which] = fresh();
      await report(`${which}Cold`, env, states[which]);
    };
    const cold = await interleave(
      {
        smallCold: coldOf("small", smallEnv),
        smallNaive: () => timed("smallNaive", [NAIVE, small.tree.sessionsDir], smallEnv),
        largeCold: coldOf("large", largeEnv),
        largeNaive: () => timed("largeNaive", [NAIVE, large.tree.sessionsDir], largeEnv),
        tasksCold: coldOf("tasks", taskEnv),
        tasksNaive: () => timed("tasksNaive", [NAIVE_TASKS, tasks.tasksDir], taskEnv),
      },
      { reps: sizes.cliReps, warmup: 0 },
    );
    const idle = await interleave(
      {
        smallIdle: () => report("smallIdle", smallEnv, states.small),
        smallIdleNaive: () => timed("smallIdleNaive", [NAIVE, small.tree.sessionsDir], smallEnv),
        largeIdle: () => report("largeIdle", largeEnv, states.large),
        largeIdleNaive: () => timed("largeIdleNaive", [NAIVE, large.tree.sessionsDir], largeEnv),
        tasksIdle: () => report("tasksIdle", taskEnv, states.tasks),
        tasksIdleNaive: () => timed("tasksIdleNaive", [NAIVE_TASKS, tasks.tasksDir], taskEnv),
      },
      { reps: sizes.cliReps + 2, warmup: 1 },
    );
    const daemon = await daemonMinute(smallEnv, states.small, sizes.daemonSeconds, () => {
      statWalk(small.tree.sessionsDir);
    });
    const taskDaemon = await daemonMinute(taskEnv, states.tasks, sizes.daemonSeconds, () => {
      taskStatWalk(tasks.tasksDir);
    });
    return {
      small: { sessions: small.rootIds.length, documents: small.docs.length, bytes: small.bytes },
      large: { documents: large.docs.length, bytes: large.bytes },
      tasks: { tasks: tasks.files.length, bytes: tasks.bytes },
      runs: { ...cold, ...idle },
      cpu,
      daemon,
      taskDaemon,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A daemon's idle CPU per minute, in units of one walk's CPU. */
export function walksPerMinute(d: DaemonMinute): number {
  return (d.cpuMs * 60) / d.seconds / d.walkCpuMs;
}

export async function ratiosCase(tmp: string, sizes: Sizes): Promise<CaseResult> {
  const m = await measureRatios(tmp, sizes);
  const ms = (x: number): string => (x >= 1000 ? `${fmt(x / 1000, 2)} s` : `${fmt(x, 0)} ms`);
  const runs = (k: string): number[] => m.runs[k] ?? [];
  const ratioRow = (measure: string, a: string, b: string, baseline: string, max: number): Row => {
    const r = median(runs(a)) / median(runs(b));
    // CPU of the same processes (warm-up rounds included): steadier than wall on a loaded machine.
    const cpuRatio = median(m.cpu[a] ?? []) / median(m.cpu[b] ?? []);
    return {
      case: "ratios",
      measure,
      value: ms(median(runs(a))),
      baseline: `${ms(median(runs(b)))} ${baseline} (CPU ratio ${fmt(cpuRatio, 2)})`,
      ratio: r,
      ratioOf: "report / naive",
      ...atMost(r, max),
    };
  };
  const daemonRow = (measure: string, d: DaemonMinute, max: number): Row => ({
    case: "ratios",
    measure,
    value: `${fmt((d.cpuMs * 60) / d.seconds / 1000, 2)} s CPU/min`,
    baseline: `${fmt(d.walkCpuMs, 0)} ms CPU a walk; ${fmt((d.passes * 60) / d.seconds, 1)} passes/min`,
    ratio: walksPerMinute(d),
    ratioOf: "walks per minute",
    ...atMost(walksPerMinute(d), max),
  });
  const smallWhat = `${m.small.sessions} sessions, ${m.small.documents} docs, ${fmt(m.small.bytes / MiB, 0)} MiB`;
  const largeWhat = `${m.large.documents} large docs, ${fmt(m.large.bytes / MiB, 0)} MiB`;
  const taskWhat = `${m.tasks.tasks} tasks, ${fmt(m.tasks.bytes / MiB, 0)} MiB`;
  const rows: Row[] = [
    ratioRow(`cold report, ${smallWhat}`, "smallCold", "smallNaive", "naive", 2),
    ratioRow("idle report (nothing new), same sessions", "smallIdle", "smallIdleNaive", "naive", 0.5),
    daemonRow("idle run daemon, same sessions, exporter off", m.daemon, 2),
    ratioRow(`cold report, ${taskWhat}`, "tasksCold", "tasksNaive", "naive (JSON.parse x2)", 2),
    ratioRow("idle report, same tasks", "tasksIdle", "tasksIdleNaive", "naive (JSON.parse x2)", 0.5),
    daemonRow("idle run daemon, same tasks, exporter off", m.taskDaemon, 2),
    ratioRow(`cold report, ${largeWhat}`, "largeCold", "largeNaive", "naive", 1),
    ratioRow("idle report, same large docs", "largeIdle", "largeIdleNaive", "naive", 0.5),
  ];
  const list = (xs: readonly number[] | undefined): string => (xs ?? []).map((x) => fmt(x, 0)).join(" ");
  const d = (x: DaemonMinute) =>
    `${x.passes} passes, ${fmt(x.cpuMs / 1000, 2)} s CPU in ${x.seconds} s, walk ${fmt(x.walkCpuMs, 1)} ms CPU`;
  return {
    name: "ratios",
    rows,
    notes: [
      `ratios: runs (ms, wall; CPU in brackets) ${Object.keys(m.runs)
        .map((k) => `${k} ${list(m.runs[k])} [${list(m.cpu[k])}]`)
        .join("; ")}`,
      `ratios: daemon (sessions) ${d(m.daemon)}; daemon (tasks) ${d(m.taskDaemon)}`,
    ],
    data: m,
  };
}
