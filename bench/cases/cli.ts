/**
 * Case "cli": the issue-15 table, as a user meets it. Whole processes of the compiled CLI
 * (`node bin/cline-otel.js`, what `npm start` and the installed bin run), against a naive script
 * that reads and JSON.parses every document, measured interleaved in the same run:
 *   - cold `report` (fresh ledger) on 10,000 small sessions, and on 240 large documents;
 *   - idle `report` (nothing new);
 *   - `run --once`, first export of the 10,000 sessions to a local OTLP receiver: peak RSS, metrics
 *     only and with all three signals (metrics, logs, traces: issue 13's memory bound);
 *   - `run --once` again when every series is past its TTL and delivered, vs an idle `report`;
 *   - the `run` daemon, exporter off, idle: passes (walks of the tree) and CPU per minute.
 * Peak RSS and CPU come from bench/lib/rss-probe.mjs, loaded into each measured process.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type Corpus, smallSessionsSpec, writeCorpus } from "../lib/corpus.ts";
import type { Sizes } from "../lib/options.ts";
import { countingReceiver } from "../lib/receiver.ts";
import { atMost, type CaseResult, type Row } from "../lib/report.ts";
import { fmt, interleave, MiB, median } from "../lib/stats.ts";
import { ROOT } from "./startup.ts";

/** The CLI measured: this tree's bin, or another build's (CLINE_OTEL_BENCH_BIN: a before/after run). */
export const BIN = process.env.CLINE_OTEL_BENCH_BIN ?? join(ROOT, "bin", "cline-otel.js");
const PROBE = join(ROOT, "bench", "lib", "rss-probe.mjs");
const NAIVE = join(ROOT, "bench", "lib", "naive-read.mjs");

export interface Probe {
  readonly maxRssKB: number;
  /** The process's CPU, all threads. */
  readonly cpuMs: number;
  /** The main thread's own CPU (the rest is V8's helper threads and libuv's pool); null: this Node cannot tell. */
  readonly mainCpuMs: number | null;
}

export interface Ran {
  readonly ms: number;
  readonly probe: Probe;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node [probe] args` to completion (async: the OTLP receiver lives in this process). */
export function runNode(args: readonly string[], env: NodeJS.ProcessEnv, probeFile: string): Promise<Ran> {
  rmSync(probeFile, { force: true });
  const t = performance.now();
  const child = spawn(process.execPath, ["--import", PROBE, ...args], {
    env: { ...env, CLINE_OTEL_BENCH_PROBE: probeFile },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = performance.now() - t;
      if (code !== 0) {
        reject(new Error(`node ${args.join(" ")} exited ${code}: ${stderr.slice(-2000)}`));
        return;
      }
      const line = readFileSync(probeFile, "utf8").trim().split("\n").at(-1) ?? "{}";
      resolve({ ms, probe: JSON.parse(line) as Probe, stdout, stderr });
    });
  });
}

/** `run --once` exporting metrics only to the local receiver at `url`, with room for a long first export. */
export function onceEnv(url: string): NodeJS.ProcessEnv {
  return cleanEnv({
    OTEL_EXPORTER_OTLP_ENDPOINT: url,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
    OTEL_LOGS_EXPORTER: "none",
    OTEL_TRACES_EXPORTER: "none",
    OTEL_METRIC_EXPORT_TIMEOUT: "120000",
    OTEL_EXPORTER_OTLP_TIMEOUT: "120000",
  });
}

export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith("CLINE_") || k.startsWith("OTEL_") || k === "XDG_STATE_HOME") continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

interface FirstExport {
  readonly ms: number;
  readonly rssMB: number;
  readonly bytes: number;
  readonly requests: number;
}

export interface CliMeasurement {
  readonly small: { readonly sessions: number; readonly documents: number; readonly bytes: number };
  readonly large: { readonly documents: number; readonly bytes: number };
  readonly naiveSmall: number[];
  readonly coldSmall: number[];
  readonly idleReport: number[];
  readonly naiveIdle: number[];
  readonly naiveLarge: number[];
  readonly coldLarge: number[];
  readonly coldLargeRssMB: number;
  readonly coldSmallRssMB: number;
  readonly firstExport: FirstExport;
  /** The same with OTEL_LOGS_EXPORTER and OTEL_TRACES_EXPORTER = otlp (fresh ledger). */
  readonly firstExportAll: FirstExport;
  readonly expiredOnce: number[];
  readonly idleReportForOnce: number[];
  readonly expiredBytes: number;
  readonly daemon: {
    readonly seconds: number;
    readonly passes: number;
    readonly cpuMs: number;
    /** The daemon's peak RSS over its life so far (VmHWM), in MB: its backfill and what it holds after. */
    readonly peakRssMB: number;
  };
}

/** The daemon, exporter off: passes and CPU over `seconds` after its first pass. */
export async function measureDaemon(
  clineDir: string,
  stateDir: string,
  seconds: number,
): Promise<CliMeasurement["daemon"]> {
  const child: ChildProcess = spawn(
    process.execPath,
    [BIN, "run", "--cline-dir", clineDir, "--state-dir", stateDir, "--log-level", "debug"],
    { env: cleanEnv({ OTEL_METRICS_EXPORTER: "none" }), stdio: ["ignore", "ignore", "pipe"] },
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
      if (Date.now() - t0 > 120_000) throw new Error(`daemon: no first pass in 120 s: ${log.slice(-1000)}`);
      if (child.exitCode !== null) throw new Error(`daemon exited ${child.exitCode}: ${log.slice(-1000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const p0 = passes();
    const c0 = cpu();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const hwm = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
    if (hwm === null) throw new Error(`daemon: no VmHWM in /proc/${child.pid}/status`);
    return { seconds, passes: passes() - p0, cpuMs: cpu() - c0, peakRssMB: Number(hwm[1]) / 1024 };
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("close", r));
  }
}

export async function measureCli(tmp: string, sizes: Sizes): Promise<CliMeasurement> {
  const dir = mkdtempSync(join(tmp, "cli-"));
  const rx = await countingReceiver();
  try {
    // Every session older than any series TTL: the second `run --once` has nothing due.
    const small: Corpus = writeCorpus(join(dir, "small"), smallSessionsSpec(sizes.cliSessions));
    const large: Corpus = writeCorpus(join(dir, "large"), {
      sessions: sizes.cliLargeDocs,
      totalBytes: sizes.cliLargeBytes,
      sizeSigma: 0.6,
      maxDocShare: 0.05,
      subagentShare: 0,
      seed: 16,
    });
    const probe = join(dir, "probe.jsonl");
    const quietEnv = cleanEnv({ OTEL_METRICS_EXPORTER: "none" });
    let n = 0;
    const fresh = (): string => join(dir, `state-${n++}`);
    const report = (c: Corpus, state: string) =>
      runNode([BIN, "report", "--cline-dir", c.tree.clineDir, "--state-dir", state], quietEnv, probe);
    const naive = (c: Corpus) => runNode([NAIVE, c.tree.sessionsDir], quietEnv, probe);

    let coldSmallRss = 0;
    let coldLargeRss = 0;
    let warmState = "";
    const cold = await interleave(
      {
        naiveSmall: () => naive(small),
        coldSmall: async () => {
          warmState = fresh();
          coldSmallRss = Math.max(coldSmallRss, (await report(small, warmState)).probe.maxRssKB);
        },
        naiveLarge: () => naive(large),
        coldLarge: async () => {
          const s = fresh();
          coldLargeRss = Math.max(coldLargeRss, (await report(large, s)).probe.maxRssKB);
          rmSync(s, { recursive: true, force: true });
        },
      },
      { reps: sizes.cliReps, warmup: 0 },
    );
    const idle = await interleave(
      { idleReport: () => report(small, warmState), naiveIdle: () => naive(small) },
      { reps: sizes.cliReps + 2, warmup: 1 },
    );

    // run --once: the first export of everything, then the one with every series expired.
    const otlpEnv = onceEnv(rx.url);
    const onceState = fresh();
    const once = () =>
      runNode(
        [BIN, "run", "--once", "--cline-dir", small.tree.clineDir, "--state-dir", onceState],
        otlpEnv,
        probe,
      );
    rx.take();
    const first = await once();
    const firstRx = rx.take();
    let expiredBytes = 0;
    const expired = await interleave(
      {
        expiredOnce: async () => {
          await once();
          expiredBytes = Math.max(expiredBytes, rx.take().bytes);
        },
        idleReportForOnce: () => report(small, warmState),
      },
      { reps: sizes.cliReps + 2, warmup: 1 },
    );
    // All three signals on, from a fresh ledger: the whole history as metrics, records and spans.
    const allState = fresh();
    const allEnv = { ...otlpEnv, OTEL_LOGS_EXPORTER: "otlp", OTEL_TRACES_EXPORTER: "otlp" };
    rx.take();
    const all = await runNode(
      [BIN, "run", "--once", "--cline-dir", small.tree.clineDir, "--state-dir", allState],
      allEnv,
      probe,
    );
    const allRx = rx.take();
    rmSync(allState, { recursive: true, force: true });
    const daemon = await measureDaemon(small.tree.clineDir, fresh(), sizes.daemonSeconds);
    return {
      small: { sessions: small.rootIds.length, documents: small.docs.length, bytes: small.bytes },
      large: { documents: large.docs.length, bytes: large.bytes },
      naiveSmall: cold.naiveSmall,
      coldSmall: cold.coldSmall,
      naiveLarge: cold.naiveLarge,
      coldLarge: cold.coldLarge,
      coldSmallRssMB: coldSmallRss / 1024,
      coldLargeRssMB: coldLargeRss / 1024,
      idleReport: idle.idleReport,
      naiveIdle: idle.naiveIdle,
      firstExport: { ms: first.ms, rssMB: first.probe.maxRssKB / 1024, ...firstRx },
      firstExportAll: { ms: all.ms, rssMB: all.probe.maxRssKB / 1024, ...allRx },
      expiredOnce: expired.expiredOnce,
      idleReportForOnce: expired.idleReportForOnce,
      expiredBytes,
      daemon,
    };
  } finally {
    await rx.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function cliCase(tmp: string, sizes: Sizes): Promise<CaseResult> {
  const m = await measureCli(tmp, sizes);
  const ms = (x: number): string => (x >= 1000 ? `${fmt(x / 1000, 2)} s` : `${fmt(x, 0)} ms`);
  const ratioRow = (
    measure: string,
    a: number[],
    b: number[],
    baseline: string,
    ratioOf: string,
    max: number,
  ): Row => ({
    case: "cli",
    measure,
    value: ms(median(a)),
    baseline: `${ms(median(b))} ${baseline}`,
    ratio: median(a) / median(b),
    ratioOf,
    ...atMost(median(a) / median(b), max),
  });
  const perMin = (x: number): number => (x * 60) / m.daemon.seconds;
  const smallWhat = `${m.small.sessions} sessions, ${m.small.documents} docs, ${fmt(m.small.bytes / MiB, 0)} MiB`;
  const rows: Row[] = [
    ratioRow(`cold report, ${smallWhat}`, m.coldSmall, m.naiveSmall, "naive", "report / naive", 2),
    ratioRow(
      `cold report, ${m.large.documents} large docs, ${fmt(m.large.bytes / MiB, 0)} MiB`,
      m.coldLarge,
      m.naiveLarge,
      "naive",
      "report / naive",
      1,
    ),
    ratioRow("idle report (nothing new)", m.idleReport, m.naiveIdle, "naive", "report / naive", 0.5),
    {
      case: "cli",
      measure: "run daemon idle, exporter off: passes (walks) per minute",
      value: fmt(perMin(m.daemon.passes), 1),
      baseline: `${fmt(perMin(m.daemon.cpuMs) / 1000, 2)} s CPU per minute`,
      ...(perMin(m.daemon.passes) <= 2 ? { target: "<= 2", ok: true } : { target: "<= 2", ok: false }),
    },
    {
      case: "cli",
      measure: `run --once, first export of ${m.small.sessions} sessions: peak RSS`,
      value: `${fmt(m.firstExport.rssMB, 0)} MB`,
      baseline: `${ms(m.firstExport.ms)}, ${fmt(m.firstExport.bytes / MiB, 1)} MiB in ${m.firstExport.requests} requests`,
      target: "<= 200 MB",
      ok: m.firstExport.rssMB <= 200,
    },
    {
      case: "cli",
      measure: `run --once, first export of ${m.small.sessions} sessions, metrics + logs + traces: peak RSS`,
      value: `${fmt(m.firstExportAll.rssMB, 0)} MB`,
      baseline: `${ms(m.firstExportAll.ms)}, ${fmt(m.firstExportAll.bytes / MiB, 1)} MiB in ${m.firstExportAll.requests} requests`,
      target: "<= 200 MB",
      ok: m.firstExportAll.rssMB <= 200,
    },
    ratioRow(
      "run --once, every series past TTL and delivered",
      m.expiredOnce,
      m.idleReportForOnce,
      "idle report",
      "run --once / idle report",
      1.5,
    ),
  ];
  const list = (xs: number[]): string => xs.map((x) => fmt(x, 0)).join(" ");
  return {
    name: "cli",
    rows,
    notes: [
      `cli: runs (ms) naive ${list(m.naiveSmall)}, cold report ${list(m.coldSmall)} (peak RSS ${fmt(m.coldSmallRssMB, 0)} MB); ` +
        `large: naive ${list(m.naiveLarge)}, cold report ${list(m.coldLarge)} (peak RSS ${fmt(m.coldLargeRssMB, 0)} MB); ` +
        `idle report ${list(m.idleReport)} vs naive ${list(m.naiveIdle)}; expired run --once ${list(m.expiredOnce)} ` +
        `(sent ${m.expiredBytes} bytes) vs idle report ${list(m.idleReportForOnce)}; daemon ${m.daemon.passes} passes, ` +
        `${fmt(m.daemon.cpuMs / 1000, 2)} s CPU in ${m.daemon.seconds} s`,
    ],
    data: m,
  };
}

/** Documents of a sessions tree (for tests of the naive reader). */
export function countDocuments(sessionsDir: string): number {
  let n = 0;
  for (const d of readdirSync(sessionsDir)) {
    for (const f of readdirSync(join(sessionsDir, d))) if (f.endsWith(".messages.json")) n++;
  }
  return n;
}
