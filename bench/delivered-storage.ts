/**
 * What STORING the counted records costs (issue 29's cost gate, the backfill): the observations of a
 * Cline data directory are read once (the adapters, this tree's code), then committed to fresh
 * ledgers in the batches the pass made, interleaved (the order rotated each round), three ways: as
 * read ("with"), without their edits, active time, deliveries and session starts ("without": what the
 * counting-off build commits), and without their edits alone ("without-edits"). The CPU of the
 * commits alone (this process, all threads: the commits' GC counts) and the ledger's size; the
 * difference is the storage part of the counting's cost, without the reading, scanning and line
 * counting that a whole-process run mixes in (and without its noise).
 *
 * "with" minus "without-edits" is what storing the edits alone costs; the rest is the activity's.
 *
 *   HOME=/path/with/.cline npx tsx --expose-gc bench/delivered-storage.ts [--rounds N]
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadSurfaces } from "../src/cli/surfaces.ts";
import { runPass } from "../src/collector/pass.ts";
import { resolveLocalConfig } from "../src/config/config.ts";
import { LEDGER_FILE, Ledger } from "../src/ledger/ledger.ts";
import type { ReadObservation } from "../src/ledger/usage/ingest.ts";

const rounds = Number(process.argv[process.argv.indexOf("--rounds") + 1] || 5);
const tmp = mkdtempSync(join(tmpdir(), "delivered-storage-"));
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

try {
  const config = resolveLocalConfig({}, process.env);
  const batches: ReadObservation[][] = [];
  {
    const ledger = Ledger.open(join(tmp, "read"));
    const adapter = (await loadSurfaces())(config, ledger.listings);
    const real = ledger.commitAll.bind(ledger);
    ledger.commitAll = (obs) => {
      batches.push([...obs]);
      return real(obs);
    };
    await runPass(adapter, ledger, {});
    ledger.close();
  }
  const without = batches.map((b) =>
    b.map((o) => {
      const { edits: _e, activeTime: _a, deliveries: _d, sessionStarts: _s, ...rest } = o;
      return rest as ReadObservation;
    }),
  );
  // Only the edits left out: what storing the edits alone costs (the rest of "with" is active time).
  const withoutEdits = batches.map((b) =>
    b.map((o) => {
      const { edits: _e, ...rest } = o;
      return rest as ReadObservation;
    }),
  );
  const count = (k: "edits" | "deliveries" | "sessionStarts") =>
    batches.reduce((n, b) => n + b.reduce((m, o) => m + (o[k]?.length ?? 0), 0), 0);
  let gaps = 0;
  for (const b of batches) for (const o of b) for (const t of o.activeTime ?? []) gaps += t.startMs.length;
  console.log(
    `batches ${batches.length}, observations ${batches.reduce((n, b) => n + b.length, 0)}, edits ${count("edits")}, active-time gaps ${gaps}, deliveries ${count("deliveries")}, session starts ${count("sessionStarts")}`,
  );
  const runs: Record<string, number[]> = { with: [], without: [], "without-edits": [] };
  let n = 0;
  const commit = (name: "with" | "without" | "without-edits", obs: ReadObservation[][]): void => {
    const dir = join(tmp, `l${n++}`);
    globalThis.gc?.();
    const t0 = cpuMs();
    const ledger = Ledger.open(dir);
    for (const b of obs) ledger.commitAll(b);
    ledger.close();
    (runs[name] as number[]).push(cpuMs() - t0);
    if (runs[name]?.length === 1)
      console.log(`${name}: ledger ${(statSync(join(dir, LEDGER_FILE)).size / 2 ** 20).toFixed(1)} MiB`);
    rmSync(dir, { recursive: true, force: true });
  };
  for (let r = 0; r < rounds; r++) {
    const order = [
      () => commit("with", batches),
      () => commit("without", without),
      () => commit("without-edits", withoutEdits),
    ];
    // Rotated each round, so a load spell hits each variant in turn.
    for (let i = 0; i < order.length; i++) (order[(i + r) % order.length] as () => void)();
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  for (const [k, v] of Object.entries(runs))
    console.log(`${k}: ${v.map((x) => x.toFixed(0)).join(" ")} ms CPU, median ${med(v).toFixed(0)}`);
  console.log(
    `storage delta (median with - median without): ${(med(runs.with as number[]) - med(runs.without as number[])).toFixed(0)} ms CPU`,
  );
  console.log(
    `of which the edits (median with - median without-edits): ${(med(runs.with as number[]) - med(runs["without-edits"] as number[])).toFixed(0)} ms CPU`,
  );
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
