/**
 * Live end to end: the REAL Cline CLI (cline@3.0.65, installed by .ci/install-cline.sh) completes
 * multi-turn tasks against the scripted mock LLM, including a TUI-resumed session, while
 * `cline-otel run` watches its directories and exports to an in-process OTLP receiver.
 * What the receiver holds must equal the usage the mock returned.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type MockLlm,
  type MockStep,
  startMockLlm,
  type ToolCallSpec,
  type UsageSpec,
} from "../../fixtures/harness/mock-llm.ts";
import {
  clineAvailable,
  clineBin,
  openAiCompatible,
  resumeCline,
  runCline,
} from "../../fixtures/harness/run-cline.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { cumulativeTotals, type Receiver, startReceiver, sumBy } from "../export/helpers/otlp-receiver.ts";
import { startDaemon } from "./helpers/cli.ts";
import { componentsOf } from "./helpers/sessions.ts";

const available = clineAvailable();
if (!available) {
  const msg = `no Cline binary at ${clineBin()} (run .ci/install-cline.sh): the live end-to-end test cannot run`;
  if (process.env.CI) throw new Error(msg);
  console.warn(`\n!!! SKIPPING the live Cline end-to-end test: ${msg}\n`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const reply = (usage: UsageSpec, text: string, ...toolCalls: ToolCallSpec[]): MockStep => ({
  kind: "reply",
  text,
  usage,
  ...(toolCalls.length > 0 ? { toolCalls } : {}),
});
const sh = (...commands: string[]): ToolCallSpec => ({ name: "run_commands", input: { commands } });
const read = (...paths: string[]): ToolCallSpec => ({
  name: "read_files",
  input: { files: paths.map((path) => ({ path })) },
});

/** Every usage number distinct, so a double count or a miss cannot cancel out. */
function script(ws: string) {
  return {
    routes: {
      t1: [
        reply({ input: 1021, output: 137, cacheRead: 0 }, "Listing.", sh("ls -1")),
        reply({ input: 233, output: 179, cacheRead: 1117 }, "Two files."),
      ],
      t1resume: [
        reply(
          { input: 461, output: 127, cacheRead: 1389 },
          "Reading both.",
          read(join(ws, "data.csv")),
          sh("wc -l notes.txt"),
        ),
        reply({ input: 317, output: 97, cacheRead: 1783 }, "Counting.", sh("wc -l data.csv")),
        reply({ input: 173, output: 239, cacheRead: 2017 }, "data.csv has 2 rows; notes.txt 2 lines."),
      ],
      t2: [
        reply(
          { input: 907, output: 61, cacheRead: 32 },
          "Checking.",
          sh("cat notes.txt"),
          sh("pwd"),
          read(join(ws, "notes.txt")),
        ),
        reply({ input: 149, output: 83, cacheRead: 911 }, "Done checking."),
      ],
    },
  };
}

async function until<T>(
  what: string,
  fn: () => T | undefined,
  ms: number,
): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  for (;;) {
    const v = fn();
    if (v !== undefined) return { value: v, ms: performance.now() - t0 };
    if (performance.now() - t0 > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20);
  }
}

function expectedByType(mock: MockLlm): Record<string, number> {
  const out: Record<string, number> = { input: 0, output: 0, cache_read: 0, cache_write: 0 };
  for (const r of mock.records) {
    const c = componentsOf(r.expected);
    out.input = (out.input ?? 0) + c.input;
    out.output = (out.output ?? 0) + c.output;
    out.cache_read = (out.cache_read ?? 0) + c.cacheRead;
    out.cache_write = (out.cache_write ?? 0) + c.cacheWrite;
  }
  return out;
}

describe.runIf(available)("live: the real Cline CLI with cline-otel run watching", () => {
  it("exports exactly the usage the mock returned, a resumed session included", async () => {
    const root = mkdtempSync(join(tmpdir(), "e2e-live-"));
    const ws = join(root, "ws");
    mkdirSync(ws, { recursive: true });
    writeFileSync(join(ws, "data.csv"), "id,name\n1,a\n2,b\n");
    writeFileSync(join(ws, "notes.txt"), "first\nsecond\n");
    const dataDir = join(root, "cline-data");
    const stateDir = join(root, "state");
    const mock = await startMockLlm(script(ws));
    let rx: Receiver | undefined;
    let daemon: ReturnType<typeof startDaemon> | undefined;
    try {
      rx = await startReceiver();
      const receiver = rx;
      // Polling every 60 s: only the filesystem watch can make the pick-up fast.
      daemon = startDaemon(["run", "--data-dir", dataDir, "--state-dir", stateDir, "--poll-interval", "60"], {
        OTEL_METRICS_EXPORTER: "otlp",
        // Series by session: the test splits the requests per session.
        OTEL_METRICS_INCLUDE_SESSION_ID: "true",
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: rx.url,
        OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "http/protobuf",
        OTEL_METRIC_EXPORT_INTERVAL: "500",
        CLINE_OTEL_LOG_LEVEL: "info",
      });
      const d = daemon;
      await until("the daemon to start", () => (d.log().includes("running:") ? true : undefined), 20_000);
      const env = { CLINE_DATA_DIR: dataDir };
      const latencies: string[] = [];
      /** Time from the end of a CLI run until the daemon's ledger holds `events` events. */
      const pickUp = async (label: string, events: number) => {
        const r = await until(
          `${label} in the ledger`,
          () => {
            const l = Ledger.open(stateDir, { readOnly: true });
            try {
              return l.counts().events >= events ? true : undefined;
            } finally {
              l.close();
            }
          },
          10_000,
        );
        latencies.push(`${label}: ${r.ms.toFixed(0)} ms`);
      };

      const first = await runCline({
        workRoot: root,
        cwd: ws,
        env,
        prompt: "What files are here [[mock:t1]]",
        provider: openAiCompatible(mock),
      });
      expect(first.exitCode, first.stderr.slice(-2000)).toBe(0);
      await pickUp("task 1", 2);
      const second = await runCline({ workRoot: root, cwd: ws, env, prompt: "Check the notes [[mock:t2]]" });
      expect(second.exitCode, second.stderr.slice(-2000)).toBe(0);
      await pickUp("task 2", 4);
      const sessionId = first.sessionIds[0];
      expect(sessionId).toBeDefined();
      const resumed = await resumeCline({
        workRoot: root,
        cwd: ws,
        env,
        prompt: "Now look inside them [[mock:t1resume]]",
        sessionId: sessionId as string,
        mock,
        route: "t1resume",
        turns: 3,
      });
      expect(resumed.exitCode, resumed.stderr.slice(-2000)).toBe(0);
      await pickUp("resumed task 1", 7);
      expect(mock.unexpected).toEqual([]);
      expect(mock.records).toHaveLength(7);

      const want = expectedByType(mock);
      const exported = await until(
        "the receiver to hold every token",
        () => {
          const got = sumBy(cumulativeTotals(receiver.points, "cline.token.usage"), "type");
          return JSON.stringify(got) === JSON.stringify(want) ? got : undefined;
        },
        10_000,
      );
      latencies.push(`exported after the last pick-up: ${exported.ms.toFixed(0)} ms`);
      // Per event: from the message's own timestamp (written by Cline) to its ingestion by the daemon.
      const l = Ledger.open(stateDir, { readOnly: true });
      const lag = [...l.iterateEvents()]
        .map((e) => Number(e.ingested_ms) - Number(e.ts_ms))
        .sort((a, b) => a - b);
      l.close();
      console.log(
        `live pick-up latency (watching, poll 60 s, export every 0.5 s): message ts -> ledger: median ${
          lag[Math.floor(lag.length / 2)]
        } ms, max ${lag[lag.length - 1]} ms (${lag.join(", ")}); waits after each CLI exit: ${latencies.join("; ")}`,
      );
      expect(lag[lag.length - 1]).toBeLessThan(5000);

      daemon.child.kill("SIGTERM");
      const done = await daemon.done;
      expect(done.status, done.stderr).toBe(0);
      expect(done.stderr).toContain("final export");
      expect(sumBy(cumulativeTotals(receiver.points, "cline.token.usage"), "type")).toEqual(want);
      expect(
        Object.values(sumBy(cumulativeTotals(receiver.points, "cline.requests"), "session.id")),
      ).toHaveLength(2);
      expect(sumBy(cumulativeTotals(receiver.points, "cline.requests"), "gen_ai.request.model")).toEqual({
        "mock-model": 7,
      });
      expect(sumBy(cumulativeTotals(receiver.points, "cline.tool.calls"), "gen_ai.tool.name")).toEqual({
        run_commands: 5,
        read_files: 2,
      });
      // openai-compatible has no price: every request is unpriced, no cost is invented.
      expect(cumulativeTotals(receiver.points, "cline.cost.usage").size).toBe(0);
      expect(
        Object.values(sumBy(cumulativeTotals(receiver.points, "cline.requests.unpriced"), "type")),
      ).toEqual([7]);
    } finally {
      if (daemon && daemon.child.exitCode === null && daemon.child.signalCode === null)
        daemon.child.kill("SIGKILL");
      await rx?.close();
      await mock.close();
      rmSync(root, { recursive: true, force: true });
    }
  }, 240_000);
});
