/**
 * Ledgers a test file opens in temp state dirs, closed and removed after each test (afterEach is
 * registered by the call, so call it at the top level of the file).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { Ledger } from "../../src/ledger/ledger.ts";
import type { Signals } from "../../src/ledger/signals/signals.ts";

export interface ScopedLedgers {
  /** A fresh temp state dir, removed after the test. */
  stateDir(): string;
  /** Opens (or reopens) the ledger in `dir`; closed after the test unless closed before. */
  open(dir: string): { l: Ledger; s: Signals };
  /** Closes a ledger before the test ends (to reopen, rewind or damage it). */
  close(l: Ledger): void;
}

export function scopedLedgers(prefix: string): ScopedLedgers {
  const dirs: string[] = [];
  const ledgers: Ledger[] = [];
  afterEach(() => {
    for (const l of ledgers.splice(0)) l.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return {
    stateDir() {
      const d = mkdtempSync(join(tmpdir(), `${prefix}-`));
      dirs.push(d);
      return d;
    },
    open(dir) {
      const l = Ledger.open(dir);
      ledgers.push(l);
      return { l, s: l.signals as Signals };
    },
    close(l) {
      ledgers.splice(ledgers.indexOf(l), 1);
      l.close();
    },
  };
}
