/**
 * Case "scale": issue 30's "bounded memory at any history" past the 10,000 sessions of the other
 * cases (docs/performance.md, "Memory at 30,000 sessions"). At each size of `sizes.scaleSessions`
 * (default 10,000 and 30,000 real-CLI-shaped sessions): `run --once`, the first export to a local
 * receiver, and its peak RSS; the MB each 1,000 sessions add between the first and the last size;
 * and over the last size, the daemon (exporter off; more session folders than its 1,024 watches):
 * its peak RSS over its backfill and an idle minute (docs/performance.md, "One string per path"),
 * and that minute's CPU in stat walks of the tree.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { smallSessionsSpec, writeCorpus } from "../lib/corpus.ts";
import type { Sizes } from "../lib/options.ts";
import { countingReceiver } from "../lib/receiver.ts";
import type { CaseResult, Row } from "../lib/report.ts";
import { fmt, median } from "../lib/stats.ts";
import { statWalk } from "../lib/walk.ts";
import { BIN, measureDaemon, onceEnv, runNode } from "./cli.ts";

export interface ScaleRun {
  readonly sessions: number;
  readonly documents: number;
  readonly onceRssMB: number;
  readonly onceMs: number;
}

export interface ScaleMeasurement {
  readonly runs: readonly ScaleRun[];
  readonly daemon: {
    readonly sessions: number;
    readonly seconds: number;
    readonly cpuMs: number;
    readonly peakRssMB: number;
  };
  readonly walkMs: number;
}

export async function measureScale(tmp: string, sizes: Sizes): Promise<ScaleMeasurement> {
  const dir = mkdtempSync(join(tmp, "scale-"));
  const rx = await countingReceiver();
  try {
    const env = onceEnv(rx.url);
    const probe = join(dir, "probe.jsonl");
    const runs: ScaleRun[] = [];
    let last: { clineDir: string; sessionsDir: string; sessions: number } | undefined;
    for (const [i, n] of sizes.scaleSessions.entries()) {
      // One corpus at a time on disk: the largest is ~700 MB.
      if (last !== undefined) rmSync(join(dir, `c${i - 1}`), { recursive: true, force: true });
      const c = writeCorpus(join(dir, `c${i}`), smallSessionsSpec(n));
      const state = join(dir, `state-${i}`);
      rx.take();
      const once = await runNode(
        [BIN, "run", "--once", "--cline-dir", c.tree.clineDir, "--state-dir", state],
        env,
        probe,
      );
      rmSync(state, { recursive: true, force: true });
      runs.push({
        sessions: n,
        documents: c.docs.length,
        onceRssMB: once.probe.maxRssKB / 1024,
        onceMs: once.ms,
      });
      last = { clineDir: c.tree.clineDir, sessionsDir: c.tree.sessionsDir, sessions: n };
    }
    if (last === undefined) throw new Error("scale: no sizes");
    const daemon = await measureDaemon(last.clineDir, join(dir, "state-daemon"), sizes.daemonSeconds);
    const walks: number[] = [];
    for (let k = 0; k < 5; k++) {
      const t = performance.now();
      statWalk(last.sessionsDir);
      walks.push(performance.now() - t);
    }
    return {
      runs,
      daemon: {
        sessions: last.sessions,
        seconds: daemon.seconds,
        cpuMs: daemon.cpuMs,
        peakRssMB: daemon.peakRssMB,
      },
      walkMs: median(walks),
    };
  } finally {
    await rx.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** MB of peak RSS each 1,000 sessions add, from the first run to the last. */
export function mbPerThousand(runs: readonly ScaleRun[]): number | undefined {
  const [a, b] = [runs[0], runs[runs.length - 1]];
  if (a === undefined || b === undefined || b.sessions === a.sessions) return undefined;
  return ((b.onceRssMB - a.onceRssMB) * 1000) / (b.sessions - a.sessions);
}

export async function scaleCase(tmp: string, sizes: Sizes): Promise<CaseResult> {
  const m = await measureScale(tmp, sizes);
  const rows: Row[] = m.runs.map((r) => ({
    case: "scale",
    measure: `run --once, first export of ${r.sessions} sessions (${r.documents} docs): peak RSS`,
    value: `${fmt(r.onceRssMB, 0)} MB`,
    baseline: `${fmt(r.onceMs / 1000, 1)} s`,
    target: "<= 200 MB",
    ok: r.onceRssMB <= 200,
  }));
  const slope = mbPerThousand(m.runs);
  if (slope !== undefined)
    rows.push({
      case: "scale",
      measure: "peak RSS each 1,000 sessions add (the pass's sources: a known limit)",
      value: `${fmt(slope, 1)} MB`,
    });
  // The daemon keeps what its idle minute needs between passes (design.md, known limits): shown
  // beside run --once's, which keeps nothing for a next pass.
  rows.push({
    case: "scale",
    measure: `run daemon over ${m.daemon.sessions} sessions, exporter off: peak RSS (backfill, then idle)`,
    value: `${fmt(m.daemon.peakRssMB, 0)} MB`,
    target: "<= 200 MB",
    ok: m.daemon.peakRssMB <= 200,
  });
  const walksPerMin = (m.daemon.cpuMs * 60) / m.daemon.seconds / m.walkMs;
  rows.push({
    case: "scale",
    measure: `run daemon idle over ${m.daemon.sessions} sessions, exporter off: CPU a minute in stat walks`,
    value: fmt(walksPerMin, 2),
    baseline: `${fmt((m.daemon.cpuMs * 60) / m.daemon.seconds / 1000, 2)} s CPU a minute, walk ${fmt(m.walkMs, 0)} ms`,
    target: "<= 2",
    ok: walksPerMin <= 2,
  });
  return {
    name: "scale",
    rows,
    notes: [
      "Peak RSS grows with the sessions: a pass holds each document's source and hint, and the index rows while it discovers (design.md, known limits).",
    ],
    data: m,
  };
}
