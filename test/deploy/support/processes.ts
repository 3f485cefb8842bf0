import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";

/** A free TCP port on 127.0.0.1 (the OS picks; the port is released before it is used). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === "object") resolve(address.port);
        else reject(new Error("no port"));
      });
    });
  });
}

/** The environment of a cline-otel child: ours, minus any OTEL_/CLINE_ setting of the machine. */
export function productEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(OTEL_|CLINE_)/.test(k)) env[k] = v;
  return { ...env, ...extra };
}

/** A child process in its own process group, so stopping it also stops what it spawned (npx -> tsx -> node). */
export interface Managed {
  readonly name: string;
  readonly child: ChildProcess;
  /** Everything it wrote so far (stdout and stderr interleaved), for failure messages. */
  output(): string;
  exited(): boolean;
  stop(): Promise<void>;
}

export function startManaged(
  name: string,
  command: string,
  args: readonly string[],
  options: { readonly cwd?: string; readonly env?: NodeJS.ProcessEnv } = {},
): Managed {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  const keep = (b: Buffer) => {
    log += b.toString("utf8");
    if (log.length > 200_000) log = log.slice(-100_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  let done = false;
  const exit = new Promise<void>((resolve) => {
    child.once("exit", () => {
      done = true;
      resolve();
    });
  });
  const signalGroup = (signal: NodeJS.Signals) => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch (e) {
      // ESRCH: the group is already gone, which is what stop() wants.
      if ((e as NodeJS.ErrnoException).code !== "ESRCH") throw e;
    }
  };
  return {
    name,
    child,
    output: () => log,
    exited: () => done,
    async stop() {
      if (done) {
        signalGroup("SIGKILL"); // grandchildren may outlive the leader
        return;
      }
      signalGroup("SIGTERM");
      const timer = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 10_000).unref());
      if ((await Promise.race([exit, timer])) === "timeout") signalGroup("SIGKILL");
      await Promise.race([exit, new Promise((r) => setTimeout(r, 2_000).unref())]);
      signalGroup("SIGKILL");
    },
  };
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ""}`);
}
