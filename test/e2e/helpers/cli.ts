import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { spawnCli } from "../../helpers/cli.ts";

export interface AsyncCliResult {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/**
 * Runs the CLI without blocking this process (an in-process receiver must keep answering),
 * killed after `timeoutMs`.
 */
export function runCliAsync(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<AsyncCliResult> {
  const t0 = performance.now();
  const child = spawnCli(args, env, { stdio: ["ignore", "pipe", "pipe"] });
  return collect(child, t0, timeoutMs);
}

export function collect(child: ChildProcess, t0: number, timeoutMs: number): Promise<AsyncCliResult> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("exit", (status, signal) => {
      clearTimeout(timer);
      // Let the pipes drain.
      setImmediate(() => resolve({ status, signal, stdout, stderr, ms: performance.now() - t0 }));
    });
  });
}

/** Starts the daemon; resolves its exit (status/signal/output) through `done`. */
export function startDaemon(args: string[], env: Record<string, string>, timeoutMs = 120_000) {
  const t0 = performance.now();
  const child = spawnCli(args, env, { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  /** Everything the daemon logged so far. */
  const log = () => stderr;
  return { child, log, done: collect(child, t0, timeoutMs) };
}

/** The directory flags of a run over a sessions dir, with its db and state dirs under `work`. */
export function dirArgs(work: string, sessionsDir: string): string[] {
  return ["--sessions-dir", sessionsDir, "--db-dir", join(work, "db"), "--state-dir", join(work, "state")];
}

/** `run --once` over a sessions dir, with its db and state dirs under `work`. */
export function onceArgs(work: string, sessionsDir: string): string[] {
  return ["run", "--once", ...dirArgs(work, sessionsDir)];
}

/** OTLP to an in-process receiver, with a short timeout. */
export function otlpEnv(url: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    OTEL_METRICS_EXPORTER: "otlp",
    OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: url,
    OTEL_EXPORTER_OTLP_TIMEOUT: "2000",
    ...extra,
  };
}
