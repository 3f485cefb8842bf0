/**
 * Task-format benchmark against the CLI adapter's targets (docs/performance.md):
 * `npx tsx bench/tasks.ts [--tasks N] [--reps R] [--idle-seconds S]` (not part of npm test).
 *
 * N (default 10,000) task folders (bench/lib/task-corpus.ts: 12 requests each, a realistic request
 * text inside every api_req_started, tool and command messages, a taskHistory.json), in one run:
 *   backfill: a full collection in a child process (wall time, peak RSS) vs a child reading the
 *             same files raw, warm and (where dd can evict) cold, interleaved; and vs readFileSync +
 *             JSON.parse of each file and of each request's inner text (the `report` row's naive);
 *   idle:     a pass with nothing changed vs a readdir + stat walk of the same folders, interleaved;
 *   pickup:   the daemon's loop (both adapters, watching): an old task rewritten by temp file + rename
 *             and a new task's first document, until the pass that read it ends;
 *   daemon:   passes per minute of that loop left alone for S seconds (default 65; 0 skips).
 * Prints ONE table: each measured value, its baseline, the ratio and the CLI's target.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClineTasksAdapter } from "../src/adapter/cline-tasks/adapter.ts";
import { SWEEP_INTERVAL_MS } from "../src/collector/loop.ts";
import { runPass } from "../src/collector/pass.ts";
import { Ledger } from "../src/ledger/ledger.ts";
import { type ChildResult, runChild } from "./lib/child.ts";
import { canEvict, evict } from "./lib/page-cache.ts";
import { atMost, type Row, renderTable } from "./lib/report.ts";
import { fmt, interleave, MiB, median } from "./lib/stats.ts";
import {
  seedTaskCheckpoints,
  TASK_REQUESTS,
  taskDir,
  taskStatWalk,
  writeTaskCorpus,
} from "./lib/task-corpus.ts";
import { daemonSurfaces, startWatchedLoop, timedRename } from "./lib/task-loop.ts";

const argOf = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const TASKS = argOf("--tasks", 10_000);
const REPS = argOf("--reps", 2);
const IDLE_SECONDS = argOf("--idle-seconds", 65);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const work = mkdtempSync(join(tmpdir(), "cline-otel-bench-tasks-"));
try {
  const corpus = writeTaskCorpus(join(work, "home"), TASKS);
  const rows: Row[] = [];
  const notes: string[] = [];

  // ---- backfill: child processes, interleaved rounds ----
  let stateN = 0;
  const pass = (): ChildResult => {
    const stateDir = join(work, `state-${stateN++}`);
    try {
      const r = runChild({ mode: "tasks-pass", home: corpus.home, stateDir });
      if (r.events !== corpus.events || r.failed !== 0)
        throw new Error(`collected ${r.events}/${corpus.events} events, ${r.failed} failed`);
      return r;
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  };
  const raw = (): ChildResult => runChild({ mode: "tasks-raw", tasksDir: corpus.tasksDir });
  const cold = canEvict();
  const m = {
    warmPass: [] as ChildResult[],
    warmRaw: [] as ChildResult[],
    coldPass: [] as ChildResult[],
    coldRaw: [] as ChildResult[],
  };
  const steps: (() => void)[] = [() => m.warmPass.push(pass()), () => m.warmRaw.push(raw())];
  if (cold)
    steps.push(
      () => {
        evict(corpus.files, work);
        m.coldPass.push(pass());
      },
      () => {
        evict(corpus.files, work);
        m.coldRaw.push(raw());
      },
    );
  raw();
  for (let r = 0; r < REPS; r++)
    for (let i = 0; i < steps.length; i++) (steps[(i + r) % steps.length] as () => void)();
  const ms = (xs: readonly ChildResult[]) => median(xs.map((x) => x.ms));
  const label = `collect ${TASKS} tasks, ${fmt(corpus.bytes / MiB, 0)} MiB`;
  for (const [which, p, q] of [
    ["warm", m.warmPass, m.warmRaw],
    ["cold", m.coldPass, m.coldRaw],
  ] as const) {
    if (p.length === 0) continue;
    rows.push({
      case: "backfill",
      measure: `${label}, ${which} cache`,
      value: `${fmt(ms(p) / 1000, 2)} s`,
      baseline: `${fmt(ms(q) / 1000, 2)} s raw read`,
      ratio: ms(p) / ms(q),
      ratioOf: "collect / raw",
      ...atMost(ms(p) / ms(q), 2),
    });
  }
  const naive = (() => {
    const t0 = performance.now();
    let n = 0;
    for (const f of corpus.files)
      for (const msg of JSON.parse(readFileSync(f, "utf8")) as { say?: string; text?: string }[])
        if (msg.say === "api_req_started" && msg.text !== undefined)
          n += (JSON.parse(msg.text) as { tokensIn: number }).tokensIn;
    if (n === 0) throw new Error("naive read found nothing");
    return performance.now() - t0;
  })();
  const warm = ms(m.warmPass);
  rows.push({
    case: "backfill",
    measure: "  per task (warm)",
    value: `${fmt(warm / TASKS, 2)} ms`,
    baseline: `${fmt(naive / TASKS, 2)} ms naive (read + JSON.parse x2)`,
    ratio: warm / naive,
    ratioOf: "collect / naive",
    ...atMost(warm / naive, 2),
  });
  const all = [...m.warmPass, ...m.coldPass];
  const peak = Math.max(...all.map((x) => x.maxRssKB)) / 1024;
  rows.push({
    case: "backfill",
    measure: "  peak RSS of the collecting process",
    value: `${fmt(peak)} MB`,
    baseline: `${fmt(Math.max(...all.map((x) => x.startRssKB)) / 1024)} MB at start`,
    target: "<= 200 MB",
    ok: peak <= 200,
  });
  notes.push(
    `backfill: ${corpus.events} events; runs (s) warm ${m.warmPass.map((x) => fmt(x.ms / 1000, 2)).join(" ")}, raw ${m.warmRaw.map((x) => fmt(x.ms / 1000, 2)).join(" ")}` +
      (cold
        ? `; cold ${m.coldPass.map((x) => fmt(x.ms / 1000, 2)).join(" ")}, raw ${m.coldRaw.map((x) => fmt(x.ms / 1000, 2)).join(" ")}`
        : "; cold runs skipped (no GNU dd with iflag=nocache)"),
  );

  // ---- idle pass and one rename, in this process on a seeded ledger ----
  const ledger = Ledger.open(join(work, "state-idle"));
  try {
    const adapter = createClineTasksAdapter(corpus.roots);
    await seedTaskCheckpoints(adapter, ledger);
    const s = await interleave(
      {
        idle: async () => {
          const r = await runPass(adapter, ledger);
          if (r.read !== 0 || r.unchanged !== TASKS) throw new Error(`idle pass read ${r.read}`);
        },
        walk: () => {
          if (taskStatWalk(corpus.tasksDir) !== TASKS) throw new Error("stat walk");
        },
      },
      { reps: 7, warmup: 1 },
    );
    const idle = median(s.idle);
    const walk = median(s.walk);
    rows.push({
      case: "idle",
      measure: `idle pass, ${TASKS} tasks`,
      value: `${fmt(idle, 0)} ms`,
      baseline: `${fmt(walk, 0)} ms stat walk`,
      ratio: idle / walk,
      ratioOf: "pass / stat walk",
      ...atMost(idle / walk, 2),
    });
    notes.push(
      `idle: runs (ms) idle ${s.idle.map((x) => fmt(x, 0)).join(" ")}, walk ${s.walk.map((x) => fmt(x, 0)).join(" ")}`,
    );

    // ---- the daemon's loop: pick-up latency, then left alone ----
    const { adapter: both, discovers } = daemonSurfaces(corpus);
    const w = await startWatchedLoop(both, ledger, both.watchPlans ?? [], {
      pollIntervalMs: 5_000,
      sweepIntervalMs: SWEEP_INTERVAL_MS,
    });
    try {
      const old: number[] = [];
      const fresh: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t = (i * 7919 + 13) % TASKS;
        old.push((await timedRename(w, corpus, discovers, t, TASK_REQUESTS + 1 + i)).latencyMs);
        mkdirSync(taskDir(corpus, TASKS + i), { recursive: true });
        await sleep(200); // the task folder first, its first messages a moment later
        fresh.push((await timedRename(w, corpus, discovers, TASKS + i, 1)).latencyMs);
      }
      for (const [measure, xs] of [
        ["daemon: an old task rewritten (temp file + rename)", old],
        ["  a new task's first document", fresh],
      ] as const) {
        rows.push({
          case: "pickup",
          measure,
          value: `${fmt(median(xs), 0)} ms`,
          baseline: `max ${fmt(Math.max(...xs), 0)} ms`,
          target: "< 1000 ms",
          ok: median(xs) < 1000,
        });
      }
      if (IDLE_SECONDS > 0) {
        await w.loop.idle();
        const before = w.passes.length;
        await sleep(IDLE_SECONDS * 1000);
        const perMin = ((w.passes.length - before) * 60) / IDLE_SECONDS;
        rows.push({
          case: "daemon",
          measure: `idle daemon loop, ${TASKS} tasks watched, ${IDLE_SECONDS} s`,
          value: `${fmt(perMin, 1)} passes/min`,
          baseline: `sweep every ${SWEEP_INTERVAL_MS / 1000} s`,
          target: "<= 2",
          ok: perMin <= 2,
        });
      }
    } finally {
      await w.stop();
    }
  } finally {
    ledger.close();
  }
  process.stdout.write(
    `task format: ${TASKS} tasks, ${corpus.events} requests, ${fmt(corpus.bytes / MiB)} MiB; targets: the CLI adapter's (docs/performance.md)\n` +
      `${renderTable(rows)}\n${notes.join("\n")}\n`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
