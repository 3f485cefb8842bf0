/**
 * The performance benchmark suite: `npm run bench [-- <case ...>] [--quick] [--reps N]`.
 *
 * Options: --quick, --reps N, --out DIR, --daemon-seconds N (each idle daemon measured this long;
 * 0: no daemon rows), --base-bin BIN (ratios: another build's bin measured beside this tree's,
 * interleaved), --corpora small,tasks,large (ratios: only these corpora's rows; default all).
 * Cases (default: all, in this order):
 *   startup   0. `--version`, `paths` and `npm start` vs `node -e 0` (bench/cases/startup.ts)
 *   cli       1. the issue-15 table, whole processes: cold/idle `report`, the idle daemon, `run --once`
 *   ratios    1. issue 30's table in one run: cold/idle `report` and the idle daemon (in stat walks) on
 *                10,000 sessions, 10,000 tasks and 240 large documents (bench/cases/ratios.ts)
 *   cold      1. issue 30's cold `report` rows, this build and CLINE_OTEL_BENCH_BASE_BIN's interleaved in
 *                one run (bench/cases/cold.ts)
 *   delivered 1. issue 29's cost: cold/idle `report` and the idle daemon, after / before, the before
 *                build being this tree with bench/lib/counting-off.patch (bench/cases/delivered.ts)
 *   scan      1. scanner vs readFileSync+JSON.parse vs raw readFileSync on a ~70 MB document
 *   backfill  2. full collection of 2,000 sessions (~2 GB) vs reading them raw; events/s, peak RSS
 *   idle      3. idle pass over 10,000 sessions vs a readdir+stat walk; a pass with one changed
 *   pickup    4. daemon (`cline-otel run`) pick-up latency of a rewritten document
 *   export    5. export at 1,000 and 10,000 sessions (bench/export.ts)
 *   huge      6. peak RSS collecting one 1 GB document
 *   slow      7. a first export of a long history to a backend at 1 request/s and at 256 KB/s
 *   fold      8. folded series (session id off): the old whole fold vs the paged SQL fold, heap peaks
 *   scale     9. `run --once` peak RSS at 10,000 and 30,000 sessions, and the idle daemon over 30,000
 *                (more session folders than watches): issue 30's memory "at any history" (bench/cases/scale.ts)
 * Self-contained: corpora are generated under one temp dir and deleted, whatever happens.
 * Prints ONE table of medians and of ratios measured in the same run (absolute times on a
 * shared machine mean little), and writes it all as JSON to .bench-out/.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { backfillCase, hugeCase } from "./cases/backfill.ts";
import { cliCase } from "./cases/cli.ts";
import { coldCase } from "./cases/cold.ts";
import { deliveredCase } from "./cases/delivered.ts";
import { exportCase } from "./cases/export.ts";
import { foldCase } from "./cases/fold.ts";
import { idleCase } from "./cases/idle.ts";
import { pickupCase } from "./cases/pickup.ts";
import { ratiosCase } from "./cases/ratios.ts";
import { scaleCase } from "./cases/scale.ts";
import { scanCase } from "./cases/scan.ts";
import { slowCase } from "./cases/slow.ts";
import { startupCase } from "./cases/startup.ts";
import { type Corpus, writeCorpus } from "./lib/corpus.ts";
import { type CaseName, type Corpus as CorpusName, parseCommandLine, type Sizes } from "./lib/options.ts";
import { type CaseResult, type Row, renderTable } from "./lib/report.ts";
import { fmt } from "./lib/stats.ts";

function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}...` : s;
}

async function main(): Promise<number> {
  let cli: ReturnType<typeof parseCommandLine>;
  try {
    cli = parseCommandLine(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`bench: ${(e as Error).message}\n`);
    return 2;
  }
  const { cases, sizes, out, baseBin, corpora } = cli;
  const tmp = mkdtempSync(join(tmpdir(), "cline-otel-bench-"));
  const cleanup = (): void => rmSync(tmp, { recursive: true, force: true });
  const onSignal = (sig: NodeJS.Signals): void => {
    cleanup();
    process.stderr.write(`\n${sig}: benchmark corpora removed\n`);
    process.exit(130);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const started = new Date();
  const load0 = loadavg();
  const results: CaseResult[] = [];
  const errors: Row[] = [];
  let history: Corpus | undefined;
  const getHistory = (): Corpus => {
    history ??= writeCorpus(join(tmp, "history", "home"), {
      sessions: sizes.historySessions,
      totalBytes: sizes.historySessions * sizes.historyBytesPerSession,
      sizeSigma: 1.2,
      maxDocShare: 0.01,
      seed: 3,
    });
    return history;
  };
  try {
    for (const name of cases) {
      const t = performance.now();
      process.stderr.write(`bench: ${name}...\n`);
      try {
        const r = await runCase(name, sizes, tmp, getHistory, baseBin, corpora);
        results.push(r);
      } catch (e) {
        errors.push({
          case: name,
          measure: `ERROR: ${clip((e as Error).message.split("\n")[0] ?? "", 70)} (details on stderr)`,
          value: "",
          ok: false,
        });
        process.stderr.write(`bench: ${name} failed: ${(e as Error).stack ?? String(e)}\n`);
      }
      process.stderr.write(`bench: ${name} done in ${fmt((performance.now() - t) / 1000, 0)} s\n`);
    }
  } finally {
    cleanup();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  const rows = [...results.flatMap((r) => r.rows), ...errors];
  const notes = results.flatMap((r) => r.notes);
  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? "",
    node: process.version,
    platform: process.platform,
    totalMemGB: Number(fmt(totalmem() / 1024 ** 3, 1)),
    loadavgStart: load0,
    loadavgEnd: loadavg(),
  };
  console.log(
    `\ncline-otel benchmarks, ${started.toISOString()}, ${machine.cpus} cores, Node ${machine.node}, ` +
      `load ${fmt(load0[0] ?? 0)} -> ${fmt(machine.loadavgEnd[0] ?? 0)}\n`,
  );
  console.log(renderTable(rows));
  console.log(`\n${notes.join("\n")}`);
  mkdirSync(out, { recursive: true });
  const json = JSON.stringify(
    { startedAt: started.toISOString(), machine, sizes, cases, baseBin, rows, notes, data: results },
    null,
    2,
  );
  const stamp = started.toISOString().replace(/[:.]/g, "-");
  writeFileSync(join(out, `bench-${stamp}.json`), json);
  writeFileSync(join(out, "latest.json"), json);
  console.log(`\nwritten: ${join(out, `bench-${stamp}.json`)}`);
  return errors.length > 0 ? 1 : 0;
}

async function runCase(
  name: CaseName,
  sizes: Sizes,
  tmp: string,
  history: () => Corpus,
  baseBin: string | undefined,
  corpora: readonly CorpusName[] | undefined,
): Promise<CaseResult> {
  switch (name) {
    case "startup":
      return startupCase(tmp, sizes.startupReps);
    case "cli":
      return cliCase(tmp, sizes);
    case "ratios":
      return ratiosCase(tmp, sizes, baseBin === undefined ? undefined : resolve(baseBin), corpora);
    case "cold":
      return coldCase(tmp, sizes);
    case "delivered":
      return deliveredCase(tmp, sizes);
    case "scan":
      return scanCase({ tmp, sizeMB: sizes.scanMB, reps: sizes.scanReps });
    case "backfill":
      return backfillCase({
        tmp,
        sessions: sizes.backfillSessions,
        totalBytes: sizes.backfillBytes,
        reps: sizes.backfillReps,
      });
    case "idle":
      return idleCase(history(), tmp, sizes.idleReps);
    case "pickup":
      return pickupCase(history(), tmp, sizes.pickupReps);
    case "export":
      return exportCase(sizes.exportSessions);
    case "slow":
      return slowCase(sizes.slowSessions);
    case "fold":
      return foldCase(sizes.foldSessions);
    case "scale":
      return scaleCase(tmp, sizes);
    case "huge":
      return hugeCase({ tmp, bytes: sizes.hugeBytes, reps: sizes.hugeReps });
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  process.exitCode = await main();
}
