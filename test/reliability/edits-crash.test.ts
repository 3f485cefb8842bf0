/**
 * File edits exactly once through kill -9, outages and restarts, history included (issue 29), on
 * the generic side alone: a test adapter (test/helpers/edits-adapter.ts, no Cline format) feeds
 * the real pass, ledger and export pipeline in a child process that is killed with SIGKILL at
 * random moments while its world keeps growing and the backend refuses a third of all requests.
 * After a final clean run (`once`): the backend's cline.lines_of_code and cline.code_edit.decisions
 * equal what the edits say (cumulative: exactly; delta: nothing lost, and what a crash between a
 * send and its commit doubled is reported), and every edit's cline.code_edit event arrived.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  cumulativeTotals,
  deltaTotals,
  type ReceivedPoint,
  startReceiver,
} from "../export/helpers/otlp-receiver.ts";
import { type EditStep, truthOf, writeEditSession } from "../helpers/edits-adapter.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const CHILD = join(ROOT, "test/reliability/edits-daemon-child.ts");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The world grows: a step every few ms, a new session every 5 steps; every decision and exactness. */
function startWorld(world: string) {
  const sessions = new Map<string, EditStep[]>();
  let n = 0;
  let stop = false;
  const run = (async () => {
    while (!stop) {
      const name = `s${Math.floor(n / 5)}`;
      const steps = sessions.get(name) ?? [];
      sessions.set(name, steps);
      const decision = (["accepted", "accepted", "rejected", "failed"] as const)[
        n % 4
      ] as EditStep["decision"];
      steps.push({
        n: steps.length,
        decision,
        added: decision === "failed" ? 0 : 1 + ((n * 7) % 23),
        removed: decision === "failed" ? 0 : (n * 3) % 11,
        exact: n % 6 !== 0,
      });
      writeEditSession(world, name, steps);
      n++;
      await sleep(25);
    }
  })();
  return {
    async stop() {
      stop = true;
      await run;
      return sessions;
    },
  };
}

function child(args: string[]) {
  const c = spawn(process.execPath, ["--import", "tsx", CHILD, ...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  c.stdout?.on("data", (d) => {
    out += String(d);
  });
  c.stderr?.on("data", (d) => {
    out += String(d);
  });
  const done = once(c, "exit").then(([code, signal]) => ({ code, signal, out }));
  return { child: c, done };
}

function byDecisionType(totals: ReadonlyMap<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of totals) {
    const a = Object.fromEntries(JSON.parse(k) as [string, unknown][]);
    const key = `${a.decision}|${a.type}`;
    out[key] = (out[key] ?? 0) + v;
  }
  return out;
}

function byDecision(totals: ReadonlyMap<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of totals) {
    const a = Object.fromEntries(JSON.parse(k) as [string, unknown][]);
    out[String(a.decision)] = (out[String(a.decision)] ?? 0) + v;
  }
  return out;
}

describe.each([
  "cumulative",
  "delta",
] as const)("file edits through kill -9 and outages (%s)", (temporality) => {
  it("the backend gets every edit's lines, decision and event; cumulative never doubled", async () => {
    const dir = mkdtempSync(join(tmpdir(), "edits-crash-"));
    dirs.push(dir);
    const world = join(dir, "world");
    mkdirSync(world);
    const state = join(dir, "state");
    let req = 0;
    const rx = await startReceiver(() => (req++ % 3 === 2 ? 503 : 200));
    const baseMs = Date.now() - 3_600_000;
    const args = [state, world, rx.baseUrl, temporality, String(baseMs)];
    const writer = startWorld(world);
    const kills: number[] = [];
    try {
      for (let k = 0; k < 4; k++) {
        const d = child(args);
        // Killed in the middle of its work, not by luck: after a random number of requests it sent
        // (the first few come once it has passed and started exporting), at most 30 s.
        const before = rx.requests.length;
        const after = 2 + Math.floor(Math.random() * 10);
        const t0 = Date.now();
        while (rx.requests.length < before + after && Date.now() - t0 < 30_000) await sleep(5);
        kills.push(rx.requests.length - before);
        d.child.kill("SIGKILL");
        const r = await d.done;
        expect(r.signal, r.out).toBe("SIGKILL");
      }
      const sessions = await writer.stop();
      rx.setStatus(() => 200);
      const final = await child([...args, "once"]).done;
      expect(final.code, final.out).toBe(0);

      const truth = truthOf(sessions);
      const points = rx.points.filter((p: ReceivedPoint) => p.scope === "cline-otel");
      const totals = temporality === "cumulative" ? cumulativeTotals : deltaTotals;
      const lines = byDecisionType(totals(points, "cline.lines_of_code"));
      const decisions = byDecision(totals(points, "cline.code_edit.decisions"));
      const events = rx.logs
        .filter((l) => l.eventName === "cline.code_edit")
        .map((l) => `${l.attributes["gen_ai.tool.call.id"]}/${l.attributes.decision}`)
        .sort();
      const doubledEvents = events.length - new Set(events).size;
      expect([...new Set(events)]).toEqual(truth.edits);
      if (temporality === "cumulative") {
        expect(lines).toEqual(truth.lines);
        expect(decisions).toEqual(truth.decisions);
        expect(new Set(points.map((p) => p.startNs)).size).toBe(1);
      } else {
        for (const [k, v] of Object.entries(truth.lines)) expect(lines[k] ?? 0, k).toBeGreaterThanOrEqual(v);
        for (const [k, v] of Object.entries(truth.decisions))
          expect(decisions[k] ?? 0, k).toBeGreaterThanOrEqual(v);
      }
      const over = Object.entries(truth.decisions).reduce((x, [k, v]) => x + ((decisions[k] ?? 0) - v), 0);
      console.log(
        `edits crash (${temporality}): kills after ${kills.join(", ")} requests; ${truth.edits.length} edits; ` +
          `${rx.requests.filter((r) => r.status === 200).length} accepted / ` +
          `${rx.requests.filter((r) => r.status === 503).length} refused requests; edits counted twice: ${over}; ` +
          `events delivered twice (a crash between a send and its commit): ${doubledEvents}`,
      );
    } finally {
      await writer.stop();
      await rx.close();
    }
  }, 120_000);
});
