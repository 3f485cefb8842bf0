import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Source, ToolCall, UsageEvent } from "../../../src/adapter/types.ts";
import { Ledger } from "../../../src/ledger/ledger.ts";
import { call, event, observation } from "../../helpers/events.ts";

export interface TempLedger {
  readonly dir: string;
  readonly ledger: Ledger;
  reopen(): Ledger;
  dispose(): void;
}

export function tempLedger(now?: () => number): TempLedger {
  const dir = mkdtempSync(join(tmpdir(), "export-ledger-"));
  let ledger = Ledger.open(dir, now ? { now } : {});
  return {
    dir,
    get ledger() {
      return ledger;
    },
    reopen() {
      ledger.close();
      ledger = Ledger.open(dir, now ? { now } : {});
      return ledger;
    },
    dispose() {
      ledger.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface SyntheticSpec {
  readonly sessions: number;
  readonly eventsPerSession?: number;
  readonly models?: readonly { model: string; provider: string }[];
  readonly tools?: readonly string[];
  readonly agents?: readonly string[];
  readonly seed?: number;
  /** First session number (fill a ledger in several rounds with distinct sessions). */
  readonly offset?: number;
}

/** One message of a synthetic session: deterministic components, 0-3 tool calls. */
export function syntheticMessage(s: number, i: number, spec: SyntheticSpec) {
  const models = spec.models ?? [
    { model: "claude-sonnet-4-5-20250929", provider: "anthropic" },
    { model: "mock-model", provider: "openai-compatible" },
  ];
  const tools = spec.tools ?? ["run_commands", "read_files", "editor"];
  const agents = spec.agents ?? ["lead", "subagent", "teammate"];
  const k = s * 131 + i * 17 + (spec.seed ?? 0);
  const m = models[k % models.length] as { model: string; provider: string };
  const agent = agents[s % agents.length] as string;
  const nTools = k % 4;
  return {
    model: m.model,
    provider: m.provider,
    agent,
    input: 500 + (k % 2000),
    output: 20 + (k % 300),
    cacheRead: k % 700,
    cacheWrite: k % 90,
    tools: Array.from({ length: nTools }, (_, j) => tools[(k + j) % tools.length] as string),
  };
}

/** Fills a ledger with sessions x events (one observation per session, like one document). */
export function fillLedger(ledger: Ledger, spec: SyntheticSpec): { events: number; calls: number } {
  let events = 0;
  let calls = 0;
  const per = spec.eventsPerSession ?? 4;
  const first = spec.offset ?? 0;
  for (let s = first; s < first + spec.sessions; s++) {
    const sessionId = `17960000${String(s).padStart(5, "0")}_abcde`;
    const evs: UsageEvent[] = [];
    const cs: ToolCall[] = [];
    for (let i = 0; i < per; i++) {
      const m = syntheticMessage(s, i, spec);
      const e = event(`msg_${i}`, {
        dedupKey: `cline|${sessionId}|${m.agent}|msg_${i}`,
        sessionId,
        agent: m.agent,
        model: m.model,
        provider: m.provider,
        project: `/home/u/proj${s % 7}`,
        input: m.input,
        output: m.output,
        cacheRead: m.cacheRead,
        cacheWrite: m.cacheWrite,
        toolCallCount: m.tools.length,
      });
      evs.push(e);
      m.tools.forEach((toolName, j) => {
        cs.push(
          call(`call_${i}_${j}`, e.dedupKey, m.tools.length, {
            callKey: `cline|${sessionId}|${m.agent}|call_${i}_${j}`,
            sessionId,
            agent: m.agent,
            toolName,
            model: m.model,
            provider: m.provider,
            project: `/home/u/proj${s % 7}`,
          }),
        );
      });
    }
    const source: Source = {
      adapterId: "cline",
      path: `/s/${sessionId}/${sessionId}.messages.json`,
      origin: "walk",
      hint: { sessionId },
    };
    const r = ledger.commit(observation(evs, cs, 100 + s, source));
    events += r.eventsAdded;
    calls += r.callsAdded;
  }
  return { events, calls };
}
