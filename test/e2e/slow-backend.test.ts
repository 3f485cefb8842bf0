/**
 * `cline-otel run` (a real process) against a slow OTLP backend on 127.0.0.1, with a history of
 * several requests: `run --once` delivers it although the whole export takes longer than the
 * SDK's export timeout, and never uses the ledger after closing it; kill -9 in the middle keeps
 * what the backend acknowledged (the next run sends only the rest); SIGTERM stops the export
 * after its current request; the daemon's final export says whether it was delivered.
 */
import { describe, expect, it } from "vitest";
import { cumulativeTotals, type Receiver, startReceiver, sumBy } from "../export/helpers/otlp-receiver.ts";
import { dirArgs, onceArgs, otlpEnv, runCliAsync, startDaemon } from "./helpers/cli.ts";
import { e2eScratch } from "./helpers/scratch.ts";
import { type SessionSpec, toolSession, truthByType, writeSession } from "./helpers/sessions.ts";

const scratch = e2eScratch();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The OTLP settings of every run here, with session.id on the metric series (the default, pinned
 * here): a series per session makes the history the many requests of 1,000 points this file is
 * about (folded series, the team setting, are few: their pages are tested in
 * test/export/backfill.test.ts).
 */
const seriesEnv = (url: string, extra: Record<string, string> = {}) =>
  otlpEnv(url, { OTEL_METRICS_INCLUDE_SESSION_ID: "true", ...extra });

/** Enough sessions for several requests of 1,000 points. */
const SESSIONS = 260;

function history(sessionsDir: string, tag: string): SessionSpec[] {
  const sessions = Array.from({ length: SESSIONS }, (_, n) => toolSession(n, 3, tag));
  for (const s of sessions) writeSession(sessionsDir, s);
  return sessions;
}

/** A work dir with the history written, and a receiver answering each request after `delayMs`. */
async function slowSetup(prefix: string, tag: string, delayMs: number) {
  const { work, sessionsDir } = scratch.withSessions(prefix);
  const sessions = history(sessionsDir, tag);
  const rx = scratch.receiver(await startReceiver());
  rx.setDelay(delayMs);
  return { work, sessionsDir, sessions, rx };
}

const accepted = (rx: Receiver) => rx.requests.filter((r) => r.status === 200).length;

async function until(what: string, f: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe("a backend slower than the export timeout", () => {
  it("run --once delivers the whole history in one run, exit 0, never into a closed ledger", async () => {
    const { work, sessionsDir, sessions, rx } = await slowSetup("e2e-slow-", "slow", 300);
    // The whole export (several requests of 300 ms) is longer than the SDK's export timeout.
    const env = seriesEnv(rx.url, { OTEL_METRIC_EXPORT_TIMEOUT: "500" });
    const r = await runCliAsync(onceArgs(work, sessionsDir), env);
    expect(r.status, r.stderr).toBe(0);
    expect(accepted(rx)).toBeGreaterThanOrEqual(3);
    expect(r.stderr).not.toMatch(/database connection is not open|are failing/);
    expect(sumBy(cumulativeTotals(rx.points, "cline.token.usage"), "type")).toEqual(truthByType(sessions));
  }, 60_000);

  it("kill -9 in the middle keeps what was acknowledged: the next run sends only the rest", async () => {
    const { work, sessionsDir } = scratch.withSessions("e2e-slow-kill-");
    const sessions = history(sessionsDir, "slkl");
    // The number of requests of the whole history, to a fast backend.
    const ref = scratch.withSessions("e2e-slow-ref-");
    history(ref.sessionsDir, "slkl");
    const fast = scratch.receiver(await startReceiver());
    const whole = await runCliAsync(onceArgs(ref.work, ref.sessionsDir), seriesEnv(fast.url));
    expect(whole.status, whole.stderr).toBe(0);
    const n = accepted(fast);
    expect(n).toBeGreaterThanOrEqual(3);

    const rx = scratch.receiver(await startReceiver());
    rx.setDelay(400);
    const env = seriesEnv(rx.url);
    const d = startDaemon(onceArgs(work, sessionsDir), env);
    await until("two acknowledged requests", () => accepted(rx) >= 2);
    // The client has recorded the second answer and sent the third request (answered in 400 ms).
    await sleep(150);
    d.child.kill("SIGKILL");
    const killed = await d.done;
    expect(killed.signal).toBe("SIGKILL");
    await sleep(500); // the request that was in flight reaches the receiver's log
    expect(accepted(rx)).toBe(3);
    const before = rx.requests.length;
    rx.setDelay(0);
    const r = await runCliAsync(onceArgs(work, sessionsDir), env);
    expect(r.status, r.stderr).toBe(0);
    // Resumed after the two recorded answers: the page in flight at the kill, then the rest.
    expect(rx.requests.length - before).toBe(n - 2);
    expect(sumBy(cumulativeTotals(rx.points, "cline.token.usage"), "type")).toEqual(truthByType(sessions));
  }, 90_000);

  it("SIGTERM during run --once: the export stops after its current request, exit 1 saying how far it got", async () => {
    const { work, sessionsDir, sessions, rx } = await slowSetup("e2e-slow-term-", "sltm", 400);
    const env = seriesEnv(rx.url, { OTEL_METRIC_EXPORT_TIMEOUT: "200" });
    const d = startDaemon(onceArgs(work, sessionsDir), env);
    await until("an acknowledged request", () => accepted(rx) >= 1);
    d.child.kill("SIGTERM");
    const r = await d.done;
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/stopped before the export was complete \(\d+ of \d+ series delivered/);
    expect(r.stderr).not.toMatch(/database connection is not open/);
    rx.setDelay(0);
    const again = await runCliAsync(onceArgs(work, sessionsDir), env);
    expect(again.status, again.stderr).toBe(0);
    expect(sumBy(cumulativeTotals(rx.points, "cline.token.usage"), "type")).toEqual(truthByType(sessions));
  }, 60_000);

  it("the daemon logs its export in pages and its final export at SIGTERM says whether it was delivered", async () => {
    const { work, sessionsDir, rx } = await slowSetup("e2e-slow-daemon-", "sldm", 200);
    const d = startDaemon(
      ["run", ...dirArgs(work, sessionsDir), "--poll-interval", "60"],
      // 6 s: the final export's budget is the interval (the timeout is capped by it), and that export
      // sends the 780 series again (~2 s at 200 ms a page); with 3 s, a loaded run stopped it short.
      seriesEnv(rx.url, { OTEL_METRIC_EXPORT_INTERVAL: "6000", CLINE_OTEL_LOG_LEVEL: "info" }),
    );
    await until("the daemon to start", () => d.log().includes("running:"));
    await until("the history delivered", () => /in pages delivered: 780 series/.test(d.log()));
    expect(d.log()).toMatch(/sending the history to \S+ in pages \(780 series, one request each\)/);
    await sleep(500);
    d.child.kill("SIGTERM");
    const r = await d.done;
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/final export delivered to otlp /);
    expect(r.stderr).not.toMatch(/database connection is not open/);
  }, 60_000);
});
