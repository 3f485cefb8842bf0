import { type SpawnOptions, spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import type { Numbers } from "../../src/report/report.ts";

export const ROOT = join(import.meta.dirname, "..", "..");
/**
 * The installed bin, running the bundle in dist/: what users run (the suite's global setup,
 * test/helpers/build-once.ts, rebuilds it when a source is newer). Not tsx on src/: a module
 * that resolves a path from its own location, or a dynamic import the bundler splits, could work
 * from src/ and break in dist/ unnoticed.
 */
export const BIN = join(ROOT, "bin", "cline-otel.js");

/** Environment for a CLI run: no inherited Cline or OTel settings leak into a test. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith("CLINE_") || k.startsWith("OTEL_") || k === "XDG_STATE_HOME") continue;
    env[k] = v;
  }
  return { ...env, OTEL_METRICS_EXPORTER: "none", ...extra };
}

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(
  args: string[],
  env: Record<string, string>,
  as: { uid?: number; gid?: number } = {},
): CliResult {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    ...as,
    cwd: ROOT,
    env: cleanEnv(env),
    encoding: "utf8",
    timeout: 120_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function spawnCli(args: string[], env: Record<string, string>, opts: SpawnOptions = {}) {
  return spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: cleanEnv(env),
    ...opts,
  });
}

export interface JsonReport {
  rows: Record<string, string | number>[];
  totals: Numbers;
}

export function reportJson(env: Record<string, string>, by: string[] = []): JsonReport {
  const r = runCli(["report", "--json", ...by.flatMap((b) => ["--by", b])], env);
  if (r.status !== 0) throw new Error(`report failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout) as JsonReport;
}
