/**
 * The ratios case's idle daemon window starts once V8's memory reducer is done with start-up's heap
 * (bench/cases/ratios.ts `daemonMinute`): the decision, and the reducer's lines as this Node prints them.
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import {
  reducerLines,
  SETTLE_MAX_MS,
  SETTLE_QUIET_MS,
  settleStep,
  wholeLines,
} from "../../bench/cases/ratios.ts";

const WAITING = "[1:0x1:0]     8256 ms: Memory reducer: high alloc, foreground";
const MORE = "[1:0x1:0]   105888 ms: Memory reducer: finished GC #1 (will do more)";
const DONE = "[1:0x1:0]   211953 ms: Memory reducer: finished GC #2 (done)";

describe("settleStep", () => {
  it("waits while the reducer is armed and not done, and ends when it is", () => {
    expect(settleStep([WAITING], 1000 + SETTLE_QUIET_MS + 1, 1000)).toBe("wait");
    expect(settleStep([WAITING, MORE], 150_000, 1000)).toBe("wait");
    expect(settleStep([WAITING, MORE, DONE], 215_000, 1000)).toBe("done");
  });

  it("ends without waiting for a reducer that never printed, once it would have", () => {
    expect(settleStep([], 1000 + SETTLE_QUIET_MS - 1, 1000)).toBe("wait");
    expect(settleStep([], 1000 + SETTLE_QUIET_MS + 1, 1000)).toBe("never-armed");
  });

  it("gives up at its cap, and says so", () => {
    expect(settleStep([WAITING, MORE], 1000 + SETTLE_MAX_MS + 1, 1000)).toBe("capped");
  });

  it("keeps only the reducer's lines of the daemon's stdout", () => {
    const out = `[1:0x1]  455 ms: Mark-Compact 19.5 (22.7) -> 16.5 (22.7) MB\n${WAITING}\nnoise\n${DONE}\n`;
    expect(reducerLines(out)).toEqual([WAITING, DONE]);
  });

  it("completes a line that a chunk boundary cut before matching it", () => {
    const cut = DONE.length - 3;
    const first = wholeLines("", `${WAITING}\n${DONE.slice(0, cut)}`);
    expect(reducerLines(first.lines)).toEqual([WAITING]);
    expect(settleStep(reducerLines(first.lines), 215_000, 1000)).toBe("wait");
    const second = wholeLines(first.carry, `${DONE.slice(cut)}\nnext`);
    expect(reducerLines(second.lines)).toEqual([DONE]);
    expect(second.carry).toBe("next");
  });
});

describe("the reducer's lines, as this Node prints them", () => {
  it("match: a process whose heap a full GC shrank is told done within seconds", async () => {
    // A forced full GC arms the reducer, which runs its GCs 8 s and 8.5 s later and prints "(done)".
    // `--optimize-for-size` makes it start them then whatever it makes of the allocation rate (on a
    // loaded machine it judged "high alloc" and waited for its 100 s watchdog, as in the daemon: seen
    // in CI). If V8 changes its wording, the bench would wait out its cap.
    const child = spawn(
      process.execPath,
      [
        "--trace-memory-reducer",
        "--optimize-for-size",
        "--expose-gc",
        "-e",
        "const a = []; for (let i = 0; i < 3e5; i++) a.push({ i }); gc(); a.length = 0; setTimeout(() => {}, 25000);",
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    const t0 = Date.now();
    const ended = new Promise((r) => child.once("close", r));
    while (settleStep(reducerLines(out), t0, t0) !== "done" && child.exitCode === null)
      await new Promise((r) => setTimeout(r, 200));
    child.kill("SIGTERM");
    await ended;
    expect(reducerLines(out).length).toBeGreaterThan(1);
    expect(settleStep(reducerLines(out), t0, t0)).toBe("done");
  }, 40_000);
});
