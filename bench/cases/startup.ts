/**
 * Case "startup": what a command costs before it does any work. Whole processes, interleaved:
 *   - the installed bin (`node bin/cline-otel.js`, the bundle in dist/) running `--version` and `paths`
 *     (on an empty Cline home: discovery finds nothing) vs `node -e 0`;
 *   - the README's `npm start -- --version` vs `npm start` of a package whose start script is
 *     `node -e 0` (npm's own start-up is the baseline, not ours).
 * `--version` and `paths` must not load the SDK, the exporters, the ledger or the price catalog.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { atMost, type CaseResult, type Row } from "../lib/report.ts";
import { fmt, interleave, median } from "../lib/stats.ts";

export const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "bin", "cline-otel.js");

export interface StartupMeasurement {
  readonly nodeE0: number[];
  readonly binVersion: number[];
  readonly binPaths: number[];
  readonly npmE0: number[];
  readonly npmVersion: number[];
  /**
   * CPU (user + system) each case's processes used in all, in clock ticks, from the kernel's
   * count of waited-for children (/proc/self/stat); absent where there is no /proc. Every case
   * runs as often, so ratios of these are ratios of mean CPU: steadier than wall time on a
   * shared machine.
   */
  readonly cpuTicks?: Readonly<Record<string, number>>;
}

/** User + system clock ticks of this process's waited-for children, or undefined without /proc. */
function childTicks(): number | undefined {
  let stat: string;
  try {
    stat = readFileSync("/proc/self/stat", "utf8");
  } catch {
    return undefined; // not Linux: the CPU note is left out, wall times still measured
  }
  // Fields after the ")" that ends the command name: cutime and cstime are the 14th and 15th.
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(f[13]) + Number(f[14]);
}

/** Runs a command to completion; throws with its stderr when it fails. */
function run(cmd: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): void {
  const r = spawnSync(cmd, args, { cwd, env, stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
}

export async function measureStartup(tmp: string, reps: number, withNpm = true): Promise<StartupMeasurement> {
  const dir = mkdtempSync(join(tmp, "startup-"));
  try {
    const home = join(dir, "home");
    mkdirSync(home);
    const baselinePkg = join(dir, "baseline-pkg");
    mkdirSync(baselinePkg);
    writeFileSync(
      join(baselinePkg, "package.json"),
      JSON.stringify({ name: "baseline", version: "0.0.0", private: true, scripts: { start: "node -e 0" } }),
    );
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, XDG_STATE_HOME: join(home, "state") };
    for (const k of Object.keys(env)) if (k.startsWith("CLINE_") || k.startsWith("OTEL_")) delete env[k];
    const node = process.execPath;
    const cases: Record<string, () => void> = {
      nodeE0: () => run(node, ["-e", "0"], dir, env),
      binVersion: () => run(node, [BIN, "--version"], dir, env),
      binPaths: () => run(node, [BIN, "paths", "--cline-dir", join(home, ".cline")], dir, env),
    };
    if (withNpm) {
      // npm runs scripts with the Node first on PATH, which is this one under .ci/with-node.
      cases.npmE0 = () => run("npm", ["start", "--silent"], baselinePkg, env);
      cases.npmVersion = () => run("npm", ["start", "--silent", "--", "--version"], ROOT, env);
    }
    const ticks: Record<string, number> = {};
    const counted = Object.fromEntries(
      Object.entries(cases).map(([name, fn]) => [
        name,
        () => {
          const t0 = childTicks();
          fn();
          const t1 = childTicks();
          if (t0 !== undefined && t1 !== undefined) ticks[name] = (ticks[name] ?? 0) + t1 - t0;
        },
      ]),
    );
    const s = await interleave(counted, { reps, warmup: 1 });
    return {
      nodeE0: s.nodeE0 ?? [],
      binVersion: s.binVersion ?? [],
      binPaths: s.binPaths ?? [],
      npmE0: s.npmE0 ?? [],
      npmVersion: s.npmVersion ?? [],
      ...(Object.keys(ticks).length > 0 ? { cpuTicks: ticks } : {}),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function startupCase(tmp: string, reps: number): Promise<CaseResult> {
  const m = await measureStartup(tmp, Math.max(reps, 9));
  const e0 = median(m.nodeE0);
  const npm0 = median(m.npmE0);
  const ms = (x: number): string => `${fmt(x, 0)} ms`;
  /** One row: the median of `runs` against the median of a baseline, passing at `limit` times it. */
  const ratioRow = (
    measure: string,
    runs: number[],
    base: { median: number; label: string; ratioOf: string },
    limit: number,
  ): Row => {
    const ratio = median(runs) / base.median;
    return {
      case: "startup",
      measure,
      value: ms(median(runs)),
      baseline: `${ms(base.median)} ${base.label}`,
      ratio,
      ratioOf: base.ratioOf,
      ...atMost(ratio, limit),
    };
  };
  const nodeBase = { median: e0, label: "node -e 0", ratioOf: "bin / node -e 0" };
  const npmBase = {
    median: npm0,
    label: "npm start of node -e 0",
    ratioOf: "npm start / npm start node -e 0",
  };
  const rows: Row[] = [
    ratioRow("installed bin: --version", m.binVersion, nodeBase, 2),
    ratioRow("installed bin: paths (empty Cline home)", m.binPaths, nodeBase, 2),
    ratioRow("npm start -- --version (README)", m.npmVersion, npmBase, 1.5),
  ];
  const list = (xs: number[]): string => xs.map((x) => fmt(x, 0)).join(" ");
  const t = m.cpuTicks;
  const cpuOf = (k: string): string => fmt((t?.[k] ?? Number.NaN) / (t?.nodeE0 ?? Number.NaN), 2);
  const cpuNote =
    t === undefined
      ? []
      : [
          `startup: CPU / node -e 0 (children's user+sys, mean of all runs): --version ${cpuOf("binVersion")}, paths ${cpuOf("binPaths")}`,
        ];
  return {
    name: "startup",
    rows,
    notes: [
      ...cpuNote,
      `startup: runs (ms) node -e 0 ${list(m.nodeE0)}; --version ${list(m.binVersion)}; paths ${list(m.binPaths)}; ` +
        `npm start node -e 0 ${list(m.npmE0)}; npm start -- --version ${list(m.npmVersion)}`,
    ],
    data: m,
  };
}
