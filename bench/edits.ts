/**
 * The ledger's cost of file edits (issue 29, the generic side): `npx tsx bench/edits.ts` (not part
 * of npm test). Commits the same synthetic history (2,000 documents of 20 requests, 20 final tool
 * calls and their signals) into fresh ledgers, without edits and with one edit per call (an editing
 * session: the most edits a history can have per call), alternating, in one run, and re-commits it
 * unchanged (a re-read: everything collapses on its keys). Prints each commit's wall time and the
 * ratios of CPU time (this process's user + system: steadier than wall time on a loaded machine); the
 * adapters' counting of lines (the scan) is not in it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EditRecord, Observation } from "../src/adapter/types.ts";
import { Ledger } from "../src/ledger/ledger.ts";
import { call, docSignals, edit, event, observation, result } from "../test/helpers/events.ts";

type Read = Extract<Observation, { status: "read" }>;
const DOCS = 2_000;
const PER = 20;

function history(withEdits: boolean): Read[] {
  const out: Read[] = [];
  for (let d = 0; d < DOCS; d++) {
    const session = `s${d}`;
    const path = `/bench/${session}/${session}.messages.json`;
    const source = { adapterId: "bench", path, origin: "walk" as const, hint: {} };
    const events = [];
    const calls = [];
    const edits: EditRecord[] = [];
    for (let m = 0; m < PER; m++) {
      const e = event(`m${m}`, {
        dedupKey: `bench|${session}|lead|m${m}`,
        sessionId: session,
        toolCallCount: 1,
        timestampMs: 1_796_000_000_000 + d * 60_000 + m * 1000,
        sourcePath: path,
      });
      const c = call(`c${m}`, e.dedupKey, 1, {
        callKey: `bench|${session}|lead|c${m}`,
        sessionId: session,
        toolName: m % 2 === 0 ? "editor" : "read_files",
        timestampMs: e.timestampMs,
        sourcePath: path,
      });
      events.push(e);
      calls.push(c);
      if (withEdits)
        edits.push(
          edit(c, { decision: m % 5 === 4 ? "rejected" : "accepted", linesAdded: m, linesRemoved: m % 3 }),
        );
    }
    const o = observation(events, calls, 100, source, docSignals(calls.map((c) => result(c))));
    out.push(withEdits ? { ...o, edits } : o);
  }
  return out;
}

function run(withEdits: boolean): { first: number; again: number } {
  const dir = mkdtempSync(join(tmpdir(), "bench-edits-"));
  try {
    const ledger = Ledger.open(dir);
    const obs = history(withEdits);
    const cpuMs = (from: NodeJS.CpuUsage) => {
      const d = process.cpuUsage(from);
      return (d.user + d.system) / 1000;
    };
    let t = process.cpuUsage();
    for (let i = 0; i < obs.length; i += 256) ledger.commitAll(obs.slice(i, i + 256));
    const first = cpuMs(t);
    t = process.cpuUsage();
    for (let i = 0; i < obs.length; i += 256) ledger.commitAll(obs.slice(i, i + 256));
    const again = cpuMs(t);
    ledger.close();
    return { first, again };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const rounds: Record<"without" | "with", { first: number; again: number }[]> = { without: [], with: [] };
for (let r = 0; r < 5; r++) {
  rounds.without.push(run(false));
  rounds.with.push(run(true));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const m = (k: "without" | "with", f: "first" | "again") => median(rounds[k].map((x) => x[f]));
for (const f of ["first", "again"] as const)
  console.log(
    `${f === "first" ? "backfill commit" : "re-read commit "} of ${DOCS * PER} requests and calls: without edits ${m("without", f).toFixed(0)} ms CPU, with ${DOCS * PER} edits ${m("with", f).toFixed(0)} ms: x${(m("with", f) / m("without", f)).toFixed(2)}`,
  );
