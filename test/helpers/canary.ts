import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { ROOT } from "./cli.ts";

export interface CanaryRun {
  readonly snapshot: Buffer;
  readonly state: string;
  readonly out: string;
}

/**
 * Runs a privacy child script (`args` then `<state> <snapshot> [control]`) that collects,
 * prints what it would show a user, and writes a V8 heap snapshot.
 */
export function runCanaryChild(
  script: string,
  dir: string,
  name: string,
  args: string[],
  control: boolean,
): CanaryRun {
  const snapshot = join(dir, `${name}.heapsnapshot`);
  const state = join(dir, `state-${name}`);
  const r = spawnSync(
    process.execPath,
    ["--import", "tsx", join(ROOT, script), ...args, state, snapshot, control ? "control" : ""],
    { cwd: ROOT, encoding: "utf8", timeout: 120_000 },
  );
  expect(r.status, r.stderr).toBe(0);
  return { snapshot: readFileSync(snapshot), state, out: r.stdout + r.stderr };
}

/** The canary is in none of: the heap (UTF-8 or UTF-16), the ledger's files, the output. */
export function expectCanaryAbsent(run: CanaryRun, canary: string): void {
  const needle = Buffer.from(canary);
  expect(run.snapshot.includes(needle)).toBe(false);
  expect(run.snapshot.includes(Buffer.from(canary, "utf16le"))).toBe(false);
  for (const f of readdirSync(run.state))
    expect(readFileSync(join(run.state, f)).includes(needle)).toBe(false);
  expect(run.out.includes(canary)).toBe(false);
}
