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
 * With `--base-bin <bin>` (another build's bin, e.g. main built in a worktree) every CLI process is
 * run for both builds, interleaved in the same rounds (each build with its own ledgers), and every
 * row is printed for both: a before/after in one run.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { SWEEP_INTERVAL_MS } from "../../src/collector/loop.ts";
import { type Corpus, smallSessionsSpec, writeCorpus } from "../lib/corpus.ts";
import { CORPORA, type Corpus as CorpusName, type Sizes } from "../lib/options.ts";
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
  /** The CPU (ms) of each whole minute of the window, in order. */
  readonly minutesCpuMs: readonly number[];
  /**
   * With `settle`: from the first pass to the window's start (ms) and the daemon's CPU then (ms),
   * and how the wait for V8's memory reducer ended (settleStep; `capped`: the window may hold its GCs).
   */
  readonly settle?: { readonly ms: number; readonly cpuMs: number; readonly reducer: SettleEnd };
}

/** A build measured: its bin, and the label its rows and runs carry ("" for the only one). */
export interface Build {
  readonly label: string;
  readonly bin: string;
}

export interface RatiosMeasurement {
  /** The corpora measured (`--corpora`); the others' sizes are 0 and their rows absent. */
  readonly corpora: readonly CorpusName[];
  readonly small: { readonly sessions: number; readonly documents: number; readonly bytes: number };
  readonly large: { readonly documents: number; readonly bytes: number };
  readonly tasks: { readonly tasks: number; readonly bytes: number };
  readonly runs: Record<string, number[]>;
  readonly cpu: Record<string, number[]>;
  /** Of `cpu`, the main thread's own (the rest is V8's helper threads: marking, scavenges, optimizing compiles). */
  readonly mainCpu: Record<string, number[]>;
  /** Each build's idle daemon minute (sessions, tasks), by the build's label; absent when not measured. */
  readonly daemons: Record<string, { readonly daemon?: DaemonMinute; readonly taskDaemon?: DaemonMinute }>;
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

/**
 * V8's memory reducer (`--trace-memory-reducer` prints its steps on stdout): the first mark-compacts
 * of a process arm it; in the idle daemon it judges the allocation rate "high" at every check, so it
 * runs its `--memory-reducer-gc-count` (2) full GCs on its 100 s watchdog, then is done until the heap
 * grows again: a one-off of the first ~3.5 minutes after start-up (docs/performance.md, "The idle
 * daemon's steady minute").
 */
const REDUCER_LINE = /Memory reducer: /;
const REDUCER_DONE = /Memory reducer: finished GC #\d+ \(done\)/;
/** The longest wait for the reducer (two watchdog periods and its short delays, with margin). */
export const SETTLE_MAX_MS = 300_000;
/** A reducer that printed nothing this long after the first pass was never armed (it prints every 8 s). */
export const SETTLE_QUIET_MS = 20_000;

export type SettleEnd = "done" | "never-armed" | "capped";

/** The reducer lines of a chunk of the daemon's stdout. */
export function reducerLines(stdout: string): string[] {
  return stdout.split("\n").filter((line) => REDUCER_LINE.test(line));
}

/**
 * The whole lines of `carry` + `chunk` (carry: the unfinished line of the chunks before), and the new
 * carry: a line that a chunk boundary cuts is matched once the next chunk completes it.
 */
export function wholeLines(carry: string, chunk: string): { readonly lines: string; readonly carry: string } {
  const text = carry + chunk;
  const end = text.lastIndexOf("\n") + 1;
  return { lines: text.slice(0, end), carry: text.slice(end) };
}

/**
 * Where the settle stands: the reducer `done`, `never-armed` (no line in SETTLE_QUIET_MS after the first
 * pass), `capped` (SETTLE_MAX_MS passed: measure anyway, and say so), or `wait`.
 */
export function settleStep(lines: readonly string[], nowMs: number, firstPassMs: number): SettleEnd | "wait" {
  if (lines.some((line) => REDUCER_DONE.test(line))) return "done";
  if (lines.length === 0 && nowMs - firstPassMs > SETTLE_QUIET_MS) return "never-armed";
  if (nowMs - firstPassMs > SETTLE_MAX_MS) return "capped";
  return "wait";
}

/**
 * The idle `run` daemon (exporter off) on an already-collected ledger: passes and CPU over `seconds`.
 * `settle`: the window starts once V8's memory reducer is done with start-up's heap (REDUCER_DONE),
 * so it measures the minute a long-running daemon pays, not start-up's one-off GCs (reported apart).
 */
export async function daemonMinute(
  env: NodeJS.ProcessEnv,
  stateDir: string,
  seconds: number,
  walk: () => void,
  bin = BIN,
  settle = false,
): Promise<DaemonMinute> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...(settle ? ["--trace-memory-reducer"] : []),
      bin,
      "run",
      "--state-dir",
      stateDir,
      "--log-level",
      "debug",
    ],
    {
      env: {
        ...env,
        OTEL_METRICS_EXPORTER: "none",
        OTEL_LOGS_EXPORTER: "none",
        OTEL_TRACES_EXPORTER: "none",
      },
      stdio: ["ignore", settle ? "pipe" : "ignore", "pipe"],
    },
  );
  let log = "";
  child.stderr?.on("data", (c: Buffer) => {
    log += c.toString();
  });
  // The reducer's lines; a line cut by a chunk boundary is completed by the next chunk.
  const reducer: string[] = [];
  let carry = "";
  child.stdout?.on("data", (c: Buffer) => {
    const w = wholeLines(carry, c.toString());
    carry = w.carry;
    reducer.push(...reducerLines(w.lines));
  });
  const passes = (): number => (log.match(/\bpass: /g) ?? []).length;
  const cpu = (): number => {
    // utime + stime of the daemon, in clock ticks (100 Hz on Linux).
    const f = readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return (Number(f[11]) + Number(f[12])) * 10;
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  try {
    const t0 = Date.now();
    while (passes() === 0) {
      if (Date.now() - t0 > 180_000) throw new Error(`daemon: no first pass in 180 s: ${log.slice(-1000)}`);
      if (child.exitCode !== null) throw new Error(`daemon exited ${child.exitCode}: ${log.slice(-1000)}`);
      await sleep(100);
    }
    const firstPass = Date.now();
    const cpuAtFirst = cpu();
    let step = settle ? settleStep(reducer, Date.now(), firstPass) : "never-armed";
    while (step === "wait") {
      if (child.exitCode !== null) throw new Error(`daemon exited ${child.exitCode}: ${log.slice(-1000)}`);
      await sleep(500);
      step = settleStep(reducer, Date.now(), firstPass);
    }
    // The minute measured starts half a sweep after the first pass (or the settle: watches set,
    // start-up's garbage collected), so each holds exactly one safety sweep (SWEEP_INTERVAL_MS)
    // whatever the jitter.
    await sleep(SWEEP_INTERVAL_MS / 2);
    const p0 = passes();
    const c0 = cpu();
    const settled = settle
      ? { settle: { ms: Date.now() - firstPass, cpuMs: c0 - cpuAtFirst, reducer: step } }
      : {};
    const minutesCpuMs: number[] = [];
    let left = seconds * 1000;
    let c = c0;
    while (left > 0) {
      const chunk = Math.min(60_000, left);
      await sleep(chunk);
      left -= chunk;
      const now = cpu();
      if (chunk === 60_000) minutesCpuMs.push(now - c);
      c = now;
    }
    const cpuMs = c - c0;
    const p1 = passes();
    return { seconds, passes: p1 - p0, cpuMs, walkCpuMs: cpuOf(walk, 7), minutesCpuMs, ...settled };
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("close", r));
  }
}

/** The name of a run of `build`: the plain name for an unlabelled build, else `<label>:<name>`. */
export function runName(build: Build, name: string): string {
  return build.label === "" ? name : `${build.label}:${name}`;
}

export async function measureRatios(
  tmp: string,
  sizes: Sizes,
  builds: readonly Build[] = [{ label: "", bin: BIN }],
  corpora: readonly CorpusName[] = CORPORA,
): Promise<RatiosMeasurement> {
  const dir = mkdtempSync(join(tmp, "ratios-"));
  const has = (c: CorpusName): boolean => corpora.includes(c);
  try {
    // A corpus not measured is an empty one (nothing written, no runs).
    const small: Corpus = writeCorpus(
      join(dir, "small"),
      smallSessionsSpec(has("small") ? sizes.cliSessions : 0),
    );
    const large: Corpus = writeCorpus(join(dir, "large"), {
      sessions: has("large") ? sizes.cliLargeDocs : 0,
      totalBytes: sizes.cliLargeBytes,
      sizeSigma: 0.6,
      maxDocShare: 0.05,
      subagentShare: 0,
      seed: 16,
    });
    const tasks: TaskCorpus = writeTaskCorpus(join(dir, "tasks"), has("tasks") ? sizes.cliSessions : 0);
    const probe = join(dir, "probe.jsonl");
    const envOf = (home: string) => cleanEnv({ HOME: home, OTEL_METRICS_EXPORTER: "none" });
    const smallEnv = envOf(small.tree.home);
    const largeEnv = envOf(large.tree.home);
    const taskEnv = envOf(tasks.home);
    let n = 0;
    const fresh = (): string => join(dir, `state-${n++}`);
    const cpu: Record<string, number[]> = {};
    const mainCpu: Record<string, number[]> = {};
    const timed = async (name: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<void> => {
      const r = await runNode(args, env, probe);
      cpu[name] = [...(cpu[name] ?? []), r.probe.cpuMs];
      if (r.probe.mainCpuMs !== null) mainCpu[name] = [...(mainCpu[name] ?? []), r.probe.mainCpuMs];
    };
    type Which = "small" | "large" | "tasks";
    // Each build's own ledgers: a build never reads what another wrote.
    const states = new Map(builds.map((b) => [b, { small: "", large: "", tasks: "" }]));
    const stateOf = (b: Build) => states.get(b) as Record<Which, string>;
    const envs: Record<Which, NodeJS.ProcessEnv> = { small: smallEnv, large: largeEnv, tasks: taskEnv };
    const report = (b: Build, name: string, which: Which) =>
      timed(runName(b, name), [b.bin, "report", "--state-dir", stateOf(b)[which]], envs[which]);
    const coldOf = (b: Build, which: Which) => async () => {
      const st = stateOf(b);
      if (st[which] !== "") rmSync(st[which], { recursive: true, force: true });
      st[which] = fresh();
      await report(b, `${which}Cold`, which);
    };
    const perBuild = (make: (b: Build) => Record<string, () => Promise<void>>) =>
      Object.assign({}, ...builds.map(make)) as Record<string, () => Promise<void>>;
    /** The runs of the corpora measured only. */
    const only = (runs: Record<CorpusName, Record<string, () => Promise<void>>>) =>
      Object.assign({}, ...corpora.map((c) => runs[c])) as Record<string, () => Promise<void>>;
    const cold = await interleave(
      only({
        small: {
          ...perBuild((b) => ({ [runName(b, "smallCold")]: coldOf(b, "small") })),
          smallNaive: () => timed("smallNaive", [NAIVE, small.tree.sessionsDir], smallEnv),
        },
        large: {
          ...perBuild((b) => ({ [runName(b, "largeCold")]: coldOf(b, "large") })),
          largeNaive: () => timed("largeNaive", [NAIVE, large.tree.sessionsDir], largeEnv),
        },
        tasks: {
          ...perBuild((b) => ({ [runName(b, "tasksCold")]: coldOf(b, "tasks") })),
          tasksNaive: () => timed("tasksNaive", [NAIVE_TASKS, tasks.tasksDir], taskEnv),
        },
      }),
      { reps: sizes.cliReps, warmup: 0 },
    );
    const idle = await interleave(
      only({
        small: {
          ...perBuild((b) => ({ [runName(b, "smallIdle")]: () => report(b, "smallIdle", "small") })),
          smallIdleNaive: () => timed("smallIdleNaive", [NAIVE, small.tree.sessionsDir], smallEnv),
        },
        large: {
          ...perBuild((b) => ({ [runName(b, "largeIdle")]: () => report(b, "largeIdle", "large") })),
          largeIdleNaive: () => timed("largeIdleNaive", [NAIVE, large.tree.sessionsDir], largeEnv),
        },
        tasks: {
          ...perBuild((b) => ({ [runName(b, "tasksIdle")]: () => report(b, "tasksIdle", "tasks") })),
          tasksIdleNaive: () => timed("tasksIdleNaive", [NAIVE_TASKS, tasks.tasksDir], taskEnv),
        },
      }),
      { reps: sizes.cliReps + 2, warmup: 1 },
    );
    // One daemon at a time (two would share the inotify budget and the cores); the builds take
    // turns, in the opposite order for the tasks, so a load spell does not always hit the same one.
    const daemons: Record<string, { daemon?: DaemonMinute; taskDaemon?: DaemonMinute }> = {};
    const daemonsToo = sizes.daemonSeconds > 0;
    const smallWalk = () => {
      statWalk(small.tree.sessionsDir);
    };
    const taskWalk = () => {
      taskStatWalk(tasks.tasksDir);
    };
    for (const b of builds) daemons[b.label] = {};
    if (daemonsToo && has("small")) {
      for (const b of builds) {
        const daemon = await daemonMinute(
          smallEnv,
          stateOf(b).small,
          sizes.daemonSeconds,
          smallWalk,
          b.bin,
          sizes.daemonSettle,
        );
        daemons[b.label] = { ...daemons[b.label], daemon };
      }
    }
    if (daemonsToo && has("tasks")) {
      for (const b of [...builds].reverse()) {
        const taskDaemon = await daemonMinute(
          taskEnv,
          stateOf(b).tasks,
          sizes.daemonSeconds,
          taskWalk,
          b.bin,
          sizes.daemonSettle,
        );
        daemons[b.label] = { ...daemons[b.label], taskDaemon };
      }
    }
    return {
      corpora,
      small: { sessions: small.rootIds.length, documents: small.docs.length, bytes: small.bytes },
      large: { documents: large.docs.length, bytes: large.bytes },
      tasks: { tasks: tasks.files.length, bytes: tasks.bytes },
      runs: { ...cold, ...idle },
      cpu,
      mainCpu,
      daemons,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A daemon's idle CPU per minute, in units of one walk's CPU. */
export function walksPerMinute(d: DaemonMinute): number {
  return (d.cpuMs * 60) / d.seconds / d.walkCpuMs;
}

export async function ratiosCase(
  tmp: string,
  sizes: Sizes,
  baseBin?: string,
  corpora: readonly CorpusName[] = CORPORA,
): Promise<CaseResult> {
  const builds: Build[] =
    baseBin === undefined
      ? [{ label: "", bin: BIN }]
      : [
          { label: "base", bin: baseBin },
          { label: "this", bin: BIN },
        ];
  const m = await measureRatios(tmp, sizes, builds, corpora);
  const ms = (x: number): string => (x >= 1000 ? `${fmt(x / 1000, 2)} s` : `${fmt(x, 0)} ms`);
  const runs = (k: string): number[] => m.runs[k] ?? [];
  const ratioRow = (measure: string, a: string, b: string, baseline: string, max: number): Row => {
    const r = median(runs(a)) / median(runs(b));
    // CPU of the same processes (warm-up rounds included): steadier than wall on a loaded machine.
    const cpuRatio = median(m.cpu[a] ?? []) / median(m.cpu[b] ?? []);
    // The main thread's: the part of the CPU on the report's critical path (the naive script's is all of its own).
    // (none from a Node before 22.15: bench/lib/rss-probe.mjs)
    const mainA = m.mainCpu[a] ?? [];
    const mainB = m.mainCpu[b] ?? [];
    const mainRatio =
      mainA.length === 0 || mainB.length === 0 ? "n/a" : fmt(median(mainA) / median(mainB), 2);
    return {
      case: "ratios",
      measure,
      value: ms(median(runs(a))),
      baseline: `${ms(median(runs(b)))} ${baseline} (CPU ratio ${fmt(cpuRatio, 2)}; main thread ${mainRatio})`,
      ratio: r,
      ratioOf: "report / naive",
      ...atMost(r, max),
    };
  };
  const daemonRow = (measure: string, d: DaemonMinute, max: number): Row =>
    d.passes === 0
      ? // A window shorter than the sweep (--quick: 15 s of a 60 s sweep) measures nothing: no verdict.
        {
          case: "ratios",
          measure,
          value: "no sweep in the window",
          baseline: "see --daemon-seconds (a sweep is every 60 s)",
        }
      : {
          case: "ratios",
          measure,
          value: `${fmt((d.cpuMs * 60) / d.seconds / 1000, 2)} s CPU/min`,
          baseline: `${fmt(d.walkCpuMs, 0)} ms CPU a walk; ${fmt((d.passes * 60) / d.seconds, 1)} passes/min`,
          ratio: walksPerMinute(d),
          ratioOf: "walks per minute",
          ...atMost(walksPerMinute(d), max),
        };
  const smallWhat = `${m.small.sessions} sessions, ${m.small.documents} docs, ${fmt(m.small.bytes / MiB, 0)} MiB`;
  const largeWhat = `${m.large.documents} large docs, ${fmt(m.large.bytes / MiB, 0)} MiB`;
  const taskWhat = `${m.tasks.tasks} tasks, ${fmt(m.tasks.bytes / MiB, 0)} MiB`;
  const rows: Row[] = [];
  for (const b of builds) {
    const tag = b.label === "" ? "" : ` [${b.label}]`;
    const k = (name: string) => runName(b, name);
    const d = m.daemons[b.label] ?? {};
    if (m.corpora.includes("small")) {
      rows.push(
        ratioRow(`cold report, ${smallWhat}${tag}`, k("smallCold"), "smallNaive", "naive", 2),
        ratioRow(
          `idle report (nothing new), same sessions${tag}`,
          k("smallIdle"),
          "smallIdleNaive",
          "naive",
          0.5,
        ),
      );
      if (d.daemon !== undefined)
        rows.push(daemonRow(`idle run daemon, same sessions, exporter off${tag}`, d.daemon, 2));
    }
    if (m.corpora.includes("tasks")) {
      rows.push(
        ratioRow(`cold report, ${taskWhat}${tag}`, k("tasksCold"), "tasksNaive", "naive (JSON.parse x2)", 2),
        ratioRow(
          `idle report, same tasks${tag}`,
          k("tasksIdle"),
          "tasksIdleNaive",
          "naive (JSON.parse x2)",
          0.5,
        ),
      );
      if (d.taskDaemon !== undefined)
        rows.push(daemonRow(`idle run daemon, same tasks, exporter off${tag}`, d.taskDaemon, 2));
    }
    if (m.corpora.includes("large")) {
      rows.push(
        ratioRow(`cold report, ${largeWhat}${tag}`, k("largeCold"), "largeNaive", "naive", 1),
        ratioRow(`idle report, same large docs${tag}`, k("largeIdle"), "largeIdleNaive", "naive", 0.5),
      );
    }
  }
  const list = (xs: readonly number[] | undefined): string => (xs ?? []).map((x) => fmt(x, 0)).join(" ");
  const dm = (x: DaemonMinute) =>
    `${x.passes} passes, ${fmt(x.cpuMs / 1000, 2)} s CPU in ${x.seconds} s (minutes ${list(x.minutesCpuMs)} ms), ` +
    `walk ${fmt(x.walkCpuMs, 1)} ms CPU` +
    (x.settle === undefined
      ? ""
      : `, after a settle of ${fmt(x.settle.ms / 1000, 0)} s from the first pass (${fmt(x.settle.cpuMs, 0)} ms CPU, ` +
        `V8's memory reducer ${x.settle.reducer === "capped" ? "NOT done: its GCs may be in the window" : x.settle.reducer})`);
  return {
    name: "ratios",
    rows,
    notes: [
      `ratios: runs (ms, wall; CPU in brackets, the main thread's in braces) ${Object.keys(m.runs)
        .map((k) => `${k} ${list(m.runs[k])} [${list(m.cpu[k])}] {${list(m.mainCpu[k])}}`)
        .join("; ")}`,
      ...builds.map((b) => {
        const d = m.daemons[b.label] ?? {};
        const who = b.label === "" ? "" : ` [${b.label}: ${b.bin}]`;
        const shown = (x: DaemonMinute | undefined) => (x === undefined ? "not measured" : dm(x));
        return `ratios: daemon${who} (sessions) ${shown(d.daemon)}; daemon (tasks) ${shown(d.taskDaemon)}`;
      }),
    ],
    data: m,
  };
}
