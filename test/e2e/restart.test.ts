/**
 * `cline-otel run --once` as a user runs it (a real process per run) against an in-process
 * OTLP receiver that reconstructs totals like a backend.
 */
import { describe, expect, it } from "vitest";
import { cumulativeTotals, startReceiver, sumBy } from "../export/helpers/otlp-receiver.ts";
import { dirArgs, onceArgs, otlpEnv, runCliAsync, startDaemon } from "./helpers/cli.ts";
import { e2eScratch } from "./helpers/scratch.ts";
import { type SessionSpec, toolSession, truthByType, writeSession } from "./helpers/sessions.ts";

const scratch = e2eScratch();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms`);
    await sleep(20);
  }
}

const session = (n: number, messages: number): SessionSpec => toolSession(n, messages, "rstrt");

describe.each([
  "http/protobuf",
  "http/json",
] as const)("run --once, twice, on the same ledger (%s)", (protocol) => {
  it("the backend's totals are unchanged by the second run and the start time is identical", async () => {
    const { work, sessionsDir } = scratch.withSessions("e2e-restart-");
    const sessions = [0, 1, 2, 3].map((n) => session(n, 3 + n));
    for (const s of sessions) writeSession(sessionsDir, s);
    const rx = scratch.receiver(await startReceiver());
    const args = onceArgs(work, sessionsDir);
    const env = otlpEnv(rx.url, { OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: protocol });
    const truth = truthByType(sessions);

    const r1 = await runCliAsync(args, env);
    expect(r1.status, r1.stderr).toBe(0);
    const after1 = sumBy(cumulativeTotals(rx.points, "cline.token.usage"), "type");
    expect(after1).toEqual(truth);

    const r2 = await runCliAsync(args, env);
    expect(r2.status, r2.stderr).toBe(0);
    expect(rx.requests.filter((r) => r.status === 200)).toHaveLength(2);
    const ours = rx.points.filter((p) => p.scope === "cline-otel");
    expect(new Set(ours.map((p) => p.request)).size).toBe(2);
    expect(new Set(ours.map((p) => p.startNs)).size).toBe(1);
    expect(new Set(ours.map((p) => p.resource["service.instance.id"])).size).toBe(1);
    expect(sumBy(cumulativeTotals(rx.points, "cline.token.usage"), "type")).toEqual(truth);
    const calls = sumBy(cumulativeTotals(rx.points, "cline.tool.calls"), "gen_ai.tool.name");
    expect(calls).toEqual({ read_files: 10, run_commands: 10 });

    // A session written between runs adds exactly its tokens.
    const late = session(9, 2);
    writeSession(sessionsDir, late);
    const r3 = await runCliAsync(args, env);
    expect(r3.status, r3.stderr).toBe(0);
    expect(sumBy(cumulativeTotals(rx.points, "cline.token.usage"), "type")).toEqual(
      truthByType([...sessions, late]),
    );
  }, 60_000);
});

describe("run --once when the collector is unreachable", () => {
  it("exits 1 naming the endpoint; the next run delivers everything", async () => {
    const { work, sessionsDir } = scratch.withSessions("e2e-down-");
    const sessions = [session(0, 2)];
    writeSession(sessionsDir, sessions[0] as SessionSpec);
    const rx = scratch.receiver(await startReceiver(() => 503));
    const args = onceArgs(work, sessionsDir);
    const env = {
      OTEL_METRICS_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: rx.url,
      OTEL_EXPORTER_OTLP_TIMEOUT: "1000",
    };
    const down = await runCliAsync(args, env);
    expect(down.status).toBe(1);
    expect(down.stderr).toContain(`could not deliver metrics to ${rx.url}`);
    expect(down.stderr).toContain("the next run sends it");
    rx.setStatus(() => 200);
    const up = await runCliAsync(args, env);
    expect(up.status, up.stderr).toBe(0);
    expect(sumBy(cumulativeTotals(rx.points, "cline.token.usage"), "type")).toEqual(truthByType(sessions));
  }, 60_000);
});

describe("SIGTERM during a backfill (reading in this thread, as on 2 cores)", () => {
  it("stops at the next source instead of the end of the pass; a restart counts the rest exactly once", async () => {
    const { work, sessionsDir } = scratch.withSessions("e2e-term-");
    // Enough documents that the first pass lasts well over a second on this machine.
    const sessions = Array.from({ length: 6000 }, (_, n) => session(n, 2));
    for (const s of sessions) writeSession(sessionsDir, s);
    const rx = scratch.receiver(await startReceiver());
    const env = otlpEnv(rx.url);
    const common = dirArgs(work, sessionsDir);
    const d = startDaemon(["run", "--poll-interval", "60", ...common], env);
    while (!d.log().includes(" running: ")) await sleep(10);
    // Discovery of 6,000 folders (~0.2 s), then into the pass (~2 s): the stop lands while documents
    // are read, on a loaded machine too (both slow down alike).
    await sleep(600);
    d.child.kill("SIGTERM");
    const r = await d.done;
    expect(r.status, r.stderr).toBe(0);
    // A pass that committed nothing logs no info line (a stop at its very start, on a loaded machine).
    const line = /pass: (\d+) of (\d+) documents read/.exec(r.stderr);
    const read = line === null ? 0 : Number(line[1]);
    if (line !== null) expect(Number(line[2])).toBe(6000);
    // Before the pass gave the loop turns, the handler ran only once all 6,000 were read.
    expect(read, r.stderr).toBeLessThan(6000);
    const total = 6000;
    const once = await runCliAsync(["run", "--once", ...common], env);
    expect(once.status, once.stderr).toBe(0);
    expect(sumBy(cumulativeTotals(rx.points, "cline.token.usage"), "type")).toEqual(truthByType(sessions));
    console.log(`SIGTERM during a backfill: stopped after ${read} of ${total} documents`);
  }, 120_000);

  it("exports run during a backfill read in this thread, and the totals stay exact", async () => {
    const { work, sessionsDir } = scratch.withSessions("e2e-export-mid-");
    const sessions = Array.from({ length: 6000 }, (_, n) => session(n, 2));
    for (const s of sessions) writeSession(sessionsDir, s);
    const rx = scratch.receiver(await startReceiver());
    const env = otlpEnv(rx.url, { OTEL_METRIC_EXPORT_INTERVAL: "250" });
    const d = startDaemon(["run", "--poll-interval", "60", ...dirArgs(work, sessionsDir)], env);
    const passLine = /pass: \d+ of \d+ documents read/;
    while (!passLine.test(d.log())) {
      if (d.child.exitCode !== null) throw new Error(`the daemon exited: ${d.log()}`);
      await sleep(20);
    }
    // Requests received by the end of the first pass: before the turns, the export timer could not
    // fire until the pass was over (at most one slipped into this poll's 20 ms).
    const duringPass = rx.requests.length;
    await until(() => rx.requests.length > duringPass + 1);
    d.child.kill("SIGTERM");
    const r = await d.done;
    expect(r.status, r.stderr).toBe(0);
    expect(duringPass, r.stderr).toBeGreaterThanOrEqual(2);
    // The pages went on past the count taken when the export began: never logged as "N of T", N > T.
    for (const [, n, t] of r.stderr.matchAll(/([\d,]+) of ([\d,]+) series/g))
      expect(Number(n?.replaceAll(",", "")), r.stderr).toBeLessThanOrEqual(Number(t?.replaceAll(",", "")));
    // The final export's deadline (the 250 ms interval) may cut it: the next run sends the rest.
    const once = await runCliAsync(["run", "--once", ...dirArgs(work, sessionsDir)], env);
    expect(once.status, once.stderr).toBe(0);
    expect(sumBy(cumulativeTotals(rx.points, "cline.token.usage"), "type")).toEqual(truthByType(sessions));
    const ours = rx.points.filter((p) => p.scope === "cline-otel");
    expect(new Set(ours.map((p) => p.startNs)).size).toBe(1);
    console.log(`exports during a backfill: ${duringPass} requests before its pass line, totals exact`);
  }, 120_000);
});
