import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BIN, cleanEnv } from "../helpers/cli.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "closed-stdout-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Runs the CLI with a stdout whose reader is gone before the CLI starts writing (`| head` that
 * has already exited): every write fails with EPIPE.
 */
function runWithClosedStdout(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: cleanEnv({ HOME: join(dir, "home") }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  // Closed long before node has started (tens of ms): the CLI's first write meets a closed pipe.
  child.stdout.destroy();
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stderr })));
}

describe("a reader that closes stdout early (cline-otel ... | head)", () => {
  for (const args of [["paths"], ["report", "--state-dir", "STATE"]]) {
    it(`${args[0]}: ends with its own exit code, no EPIPE stack`, async () => {
      const r = await runWithClosedStdout(args.map((a) => (a === "STATE" ? join(dir, "state") : a)));
      expect(r.stderr).not.toMatch(/EPIPE|Unhandled|at .*\.ts/);
      expect(r.code).toBe(0);
    });
  }
});
