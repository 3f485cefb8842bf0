/**
 * The per-test scratch of the end-to-end tests: temporary work dirs and the receiver a test
 * started, closed and removed after each test (receiver first: the CLI's ledger lives in the dir).
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";

export interface E2eScratch {
  /** A fresh `<tmp>/<prefix>XXXXXX`, removed after the test. */
  dir(prefix: string): string;
  /** A fresh work dir (as `dir`) holding an empty `sessions` dir, Cline's sessions tree. */
  withSessions(prefix: string): { work: string; sessionsDir: string };
  /** Closes `rx` after the test; returns it. */
  receiver<R extends { close(): Promise<void> }>(rx: R): R;
}

/** Call once at the top of a test file: registers the `afterEach` cleanup. */
export function e2eScratch(): E2eScratch {
  const dirs: string[] = [];
  const receivers: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const rx of receivers.splice(0)) await rx.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const dir = (prefix: string): string => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
  return {
    dir,
    withSessions(prefix) {
      const work = dir(prefix);
      const sessionsDir = join(work, "sessions");
      mkdirSync(sessionsDir);
      return { work, sessionsDir };
    },
    receiver(rx) {
      receivers.push(rx);
      return rx;
    },
  };
}
