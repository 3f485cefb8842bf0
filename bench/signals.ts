/**
 * Events/traces benchmark: `npx tsx bench/signals.ts <work dir>` (not part of npm test).
 *
 * Writes the 10,000-session backfill corpus (bench/lib/corpus.ts, ~625 MB) once, then in child
 * processes: the cold collection pass with the signal tables (`on`) and without (`off`: the same
 * observations with their `signals` stripped), the first export of the whole history as events
 * and spans to a local receiver that counts bytes (`export`), and an idle send round (`idle`).
 * Prints each child's wall time, CPU time (the pass's) and peak RSS; compare `on` to `off` in the
 * same run (the ratio is what docs/events.md reports; prefer CPU time on a loaded machine).
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createClineAdapter } from "../src/adapter/cline/adapter.ts";
import { resolveClinePaths } from "../src/adapter/cline/paths.ts";
import type { Adapter, Observation } from "../src/adapter/types.ts";
import { runPass } from "../src/collector/pass.ts";
import { resolveSignalsConfig } from "../src/config/signals.ts";
import { buildPriceLookup } from "../src/export/price-lookup.ts";
import { buildResource } from "../src/export/resource.ts";
import { SignalPipeline } from "../src/export/signals/pipeline.ts";
import { Ledger } from "../src/ledger/ledger.ts";
import { createLogger } from "../src/util/log.ts";
import { writeCorpus } from "./lib/corpus.ts";
import { countingReceiver } from "./lib/receiver.ts";

if (process.argv.length === 3) {
  const { spawnSync } = await import("node:child_process");
  const work = process.argv[2] as string;
  const me = new URL(import.meta.url).pathname;
  const child = (...a: string[]) => {
    const r = spawnSync(process.execPath, ["--import", "tsx", me, ...a], { encoding: "utf8" });
    process.stdout.write(r.stdout.replace(/\n(?=.)/g, " ") || r.stderr);
  };
  child("gen", join(work, "home"), "");
  for (const m of ["off", "on", "off", "on"]) {
    const state = join(work, `state-${m}`);
    rmSync(state, { recursive: true, force: true });
    child(m, join(work, "home"), state);
  }
  child("export", join(work, "home"), join(work, "state-on"));
  child("idle", join(work, "home"), join(work, "state-on"));
  process.exit(0);
}
const mode = process.argv[2] as "gen" | "on" | "off" | "export" | "idle";
const home = process.argv[3] as string;
const state = process.argv[4] as string;
if (mode === "gen") {
  // The corpus is deterministic (seed 7): a complete one from an earlier run is reused, so two
  // builds can be compared on the same files without writing 625 MB twice.
  const done = join(home, "corpus.json");
  if (existsSync(done)) {
    console.log(readFileSync(done, "utf8").trim());
    process.exit(0);
  }
  rmSync(home, { recursive: true, force: true });
  const c = writeCorpus(home, { sessions: 10_000, totalBytes: 400 * 1024 * 1024, seed: 7 });
  const stats = JSON.stringify({
    docs: c.docs.length,
    events: c.events,
    toolUses: c.toolUses,
    bytes: c.bytes,
  });
  writeFileSync(done, `${stats}\n`);
  console.log(stats);
  process.exit(0);
}
const paths = resolveClinePaths({}, {}, home);
const base = createClineAdapter(paths);
const strip = (o: Observation): Observation => (o.status === "read" ? { ...o, signals: undefined } : o);
const adapter: Adapter =
  mode === "off"
    ? {
        ...base,
        collectIncremental: async (s, c) => strip(await base.collectIncremental(s, c)),
      }
    : base;
const ledger = Ledger.open(state);
const t0 = performance.now();
const c0 = process.cpuUsage();
if (mode === "on" || mode === "off") {
  const r = await runPass(adapter, ledger);
  // CPU time beside wall time: on a shared machine the wall-time ratio moves with the load.
  const c = process.cpuUsage(c0);
  const cpuMs = Math.round((c.user + c.system) / 1000);
  console.log(
    JSON.stringify({ mode, ms: Math.round(performance.now() - t0), cpuMs, read: r.read ?? undefined }),
  );
} else {
  const rx = await countingReceiver();
  const cfg = resolveSignalsConfig(
    {
      OTEL_LOGS_EXPORTER: "otlp",
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_ENDPOINT: rx.url,
    },
    { fileHeaders: {}, fileVia: "", cwd: "/tmp" },
    false,
  );
  const p = await SignalPipeline.create(cfg, ledger, {
    logger: createLogger("warn"),
    priceOf: buildPriceLookup(undefined),
    project: "path",
    resource: buildResource(
      { serviceName: "cline-otel", resourceAttributes: {} },
      ledger.instanceId,
      "0",
      "h",
    ),
    serviceVersion: "0",
  });
  if (mode === "idle") {
    // Everything delivered already: what one scheduled round costs when nothing is new.
    await p.flush();
    const t1 = performance.now();
    for (let i = 0; i < 100; i++) await p.flush();
    console.log(JSON.stringify({ mode, perRoundMs: (performance.now() - t1) / 100 }));
  } else {
    const out = await p.flush();
    const { bytes, requests } = rx.take();
    console.log(
      JSON.stringify({
        mode,
        ok: out.ok,
        ms: Math.round(performance.now() - t0),
        requests,
        mb: Math.round(bytes / 1048576),
      }),
    );
  }
  await p.shutdown();
  void rx.close(); // not awaited, as before: the stats below do not wait for the socket
}
ledger.close();
const rss = process.resourceUsage().maxRSS;
console.log(JSON.stringify({ peakRssMB: Math.round(rss / 1024) }));
