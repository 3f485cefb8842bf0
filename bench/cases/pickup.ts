/**
 * Case 4: pick-up latency of the real daemon (`cline-otel run`, watching on, no exporter).
 * After its first pass over the history, a document is rewritten the way Cline rewrites it
 * (truncate + write, one more turn appended) and the time until the new event is in the
 * ledger is measured by polling the ledger read-only (`maxIds()`), every 2 ms.
 * Scenarios: the newest session's document (the one Cline is writing), a brand-new session
 * (index row, sidecar, then its first document), and the oldest session (a resume: every
 * session directory is watched, so it is picked up like the newest, not by the poll).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { Ledger } from "../../src/ledger/ledger.ts";
import { sessionRow } from "../../test/adapter/cline/helpers/cline-db.ts";
import { appendToDocument, type Corpus, type CorpusDoc, writeDocument } from "../lib/corpus.ts";
import type { CaseResult, Row } from "../lib/report.ts";
import { fmt, median } from "../lib/stats.ts";

const MAIN = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
const POLL_SECONDS = 5;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface Daemon {
  readonly proc: ChildProcess;
  readonly log: string[];
  exited: boolean;
}

function startDaemon(clineDir: string, stateDir: string): Daemon {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith("CLINE_") && !k.startsWith("OTEL_")) env[k] = v;
  }
  env.OTEL_METRICS_EXPORTER = "none";
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
  const proc = spawn(
    process.execPath,
    [
      "--import",
      tsx,
      MAIN,
      "run",
      "--cline-dir",
      clineDir,
      "--state-dir",
      stateDir,
      "--poll-interval",
      String(POLL_SECONDS),
      "--log-level",
      "info",
    ],
    { env, stdio: ["ignore", "ignore", "pipe"] },
  );
  // If the benchmark is interrupted (its signal handler calls process.exit), take the daemon along.
  const orphanGuard = (): void => {
    proc.kill("SIGKILL");
  };
  process.once("exit", orphanGuard);
  const d: Daemon = { proc, log: [], exited: false };
  proc.stderr?.setEncoding("utf8").on("data", (s: string) => {
    for (const l of s.split("\n")) if (l.trim() !== "" && !l.includes("\r")) d.log.push(l);
  });
  proc.on("exit", () => {
    d.exited = true;
    process.off("exit", orphanGuard);
  });
  return d;
}

async function stopDaemon(d: Daemon): Promise<void> {
  if (d.exited) return;
  const done = new Promise<void>((r) => d.proc.once("exit", () => r()));
  d.proc.kill("SIGTERM");
  const killed = await Promise.race([done.then(() => false), sleep(20_000).then(() => true)]);
  if (killed) {
    d.proc.kill("SIGKILL");
    await done;
  }
}

/** The ledger, read-only, once the daemon has created it. */
async function openLedger(stateDir: string, d: Daemon, timeoutMs: number): Promise<Ledger> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (d.exited) throw new Error(`daemon exited early:\n${d.log.join("\n")}`);
    try {
      return Ledger.open(stateDir, { readOnly: true });
    } catch (e) {
      if (Date.now() > until) throw e;
      await sleep(100);
    }
  }
}

/** Polls until the ledger holds more than `above` events; returns ms since `t0`. */
async function waitForEvents(ledger: Ledger, above: number, t0: number, d: Daemon, timeoutMs: number) {
  for (;;) {
    if (ledger.maxIds().event > above) return performance.now() - t0;
    if (d.exited) throw new Error(`daemon exited:\n${d.log.join("\n")}`);
    if (performance.now() - t0 > timeoutMs) {
      throw new Error(`no new event after ${timeoutMs} ms; daemon log:\n${d.log.slice(-20).join("\n")}`);
    }
    await sleep(2);
  }
}

export interface PickupMeasurement {
  readonly sessions: number;
  readonly firstPassMs: number;
  readonly active: number[];
  readonly newSession: number[];
  readonly oldSession: number[];
  readonly daemonLog: string[];
}

export async function measurePickup(corpus: Corpus, tmp: string, reps: number): Promise<PickupMeasurement> {
  const stateDir = mkdtempSync(join(tmp, "pickup-state-"));
  const t0 = performance.now();
  const d = startDaemon(corpus.tree.clineDir, stateDir);
  let ledger: Ledger | undefined;
  try {
    ledger = await openLedger(stateDir, d, 60_000);
    await waitForEvents(ledger, corpus.events - 1, t0, d, 600_000);
    const firstPassMs = performance.now() - t0;
    await sleep(1500); // let the follow-up pass and the watch refresh settle

    const leadOf = (root: string): number => {
      const k = corpus.docs.findIndex((x) => x.spec.sessionId === root);
      if (k < 0) throw new Error(`no lead document for ${root}`);
      return k;
    };
    const roots = [...corpus.rootIds].sort();
    const trial = async (k: number): Promise<number> => {
      const before = (ledger as Ledger).maxIds().event;
      const t = performance.now();
      appendToDocument(corpus, k, 1);
      const ms = await waitForEvents(ledger as Ledger, before, t, d, 30_000);
      await sleep(300);
      return ms;
    };

    const active: number[] = [];
    for (let i = 0; i < reps; i++) active.push(await trial(leadOf(roots.at(-1) as string)));

    const newSession: number[] = [];
    const reservoirDoc = corpus.docs[0] as CorpusDoc;
    for (let i = 0; i < reps; i++) {
      const started = Number((roots.at(-1) as string).split("_")[0]) + 3_600_000 * (i + 1);
      const rootId = `${started}_new${i}x`;
      const dir = join(corpus.tree.sessionsDir, rootId);
      const path = join(dir, `${rootId}.messages.json`);
      const db = new Database(join(corpus.tree.dbDir, "sessions.db"));
      try {
        const row = sessionRow(rootId, { cwd: "/home/dev/src/new", messages_path: path, status: "running" });
        const cols = Object.keys(row);
        db.prepare(
          `INSERT INTO sessions (${cols.join(", ")}) VALUES (${cols.map((c) => `@${c}`).join(", ")})`,
        ).run(row);
      } finally {
        db.close();
      }
      mkdirSync(dir);
      writeFileSync(
        join(dir, `${rootId}.json`),
        `${JSON.stringify({ version: 1, session_id: rootId, cwd: "/home/dev/src/new" }, null, 2)}\n`,
      );
      await sleep(500); // the session starts; its first model response comes later
      const before = ledger.maxIds().event;
      const t = performance.now();
      writeDocument({
        ...reservoirDoc.spec,
        path,
        sessionId: rootId,
        rootId,
        agent: "lead",
        targetBytes: 20_000,
        extraTurns: 0,
        startTs: started,
        seed: 900 + i,
      });
      newSession.push(await waitForEvents(ledger, before, t, d, 30_000));
      await sleep(300);
    }

    const oldSession: number[] = [];
    // A different old session each time (each directory is watched from the start).
    for (let i = 0; i < Math.min(reps, 3); i++) oldSession.push(await trial(leadOf(roots[i] as string)));
    return {
      sessions: corpus.rootIds.length,
      firstPassMs,
      active,
      newSession,
      oldSession,
      daemonLog: d.log.slice(-40),
    };
  } finally {
    ledger?.close();
    await stopDaemon(d);
    rmSync(stateDir, { recursive: true, force: true });
  }
}

export async function pickupCase(corpus: Corpus, tmp: string, reps: number): Promise<CaseResult> {
  const m = await measurePickup(corpus, tmp, reps);
  const row = (measure: string, xs: number[], target: boolean): Row => ({
    case: "pickup",
    measure,
    value: `${fmt(median(xs), 0)} ms`,
    baseline: `max ${fmt(Math.max(...xs), 0)} ms`,
    ...(target ? { target: "< 1000 ms", ok: median(xs) < 1000 } : {}),
  });
  return {
    name: "pickup",
    rows: [
      row(`daemon, ${m.sessions} sessions: newest session rewritten`, m.active, true),
      row("  new session's first document", m.newSession, true),
      row("  an old session rewritten (a resume)", m.oldSession, true),
    ],
    notes: [
      `pickup: real \`cline-otel run\` (watch on, OTEL_METRICS_EXPORTER=none); its first pass over the history ` +
        `took ${fmt(m.firstPassMs / 1000, 1)} s including start-up; runs (ms) newest ${m.active.map((x) => fmt(x, 0)).join(" ")}, ` +
        `new ${m.newSession.map((x) => fmt(x, 0)).join(" ")}, old ${m.oldSession.map((x) => fmt(x, 0)).join(" ")}`,
    ],
    data: m,
  };
}
