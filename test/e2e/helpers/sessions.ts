/**
 * Writes Cline CLI message documents the way Cline does (docs/cline-format.md §3-4): the whole document,
 * `JSON.stringify(doc, null, 2)`, truncated and rewritten in place, plus the root sidecar with
 * the cwd. Also computes the ground truth a ledger must hold for what was written.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RECENT_MS } from "../../helpers/recent.ts";

export interface Metrics {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
}

export interface Msg {
  readonly id: string;
  readonly model: string;
  readonly provider: string;
  /** Absent: a message without usage (its tool calls have unknown cost). */
  readonly metrics?: Metrics;
  readonly tools?: readonly string[];
  readonly ts?: number;
}

export interface SessionSpec {
  readonly sessionId: string;
  readonly cwd: string;
  readonly agent?: string;
  readonly messages: readonly Msg[];
}

/** When the written messages happened: recent (RECENT_MS says why). */
const MESSAGES_AT_MS = RECENT_MS;

export function docPath(sessionsDir: string, sessionId: string): string {
  return join(sessionsDir, sessionId, `${sessionId}.messages.json`);
}

/** (Re)writes a session's whole document in place, like Cline after every iteration. */
export function writeSession(sessionsDir: string, s: SessionSpec): string {
  const dir = join(sessionsDir, s.sessionId);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, `${s.sessionId}.json`),
    `${JSON.stringify({ session_id: s.sessionId, cwd: s.cwd }, null, 2)}\n`,
  );
  const messages: unknown[] = [
    {
      id: `u_${s.sessionId}`,
      role: "user",
      ts: MESSAGES_AT_MS,
      content: [{ type: "text", text: "do the task" }],
    },
  ];
  for (const m of s.messages) {
    messages.push({
      id: m.id,
      role: "assistant",
      ts: m.ts ?? MESSAGES_AT_MS + 100,
      content: [
        { type: "text", text: "working on it" },
        ...(m.tools ?? []).map((name, i) => ({
          type: "tool_use",
          id: `call_${m.id}_${i}`,
          name,
          input: { x: 1 },
        })),
      ],
      modelInfo: { id: m.model, provider: m.provider },
      ...(m.metrics ? { metrics: m.metrics } : {}),
    });
    for (const [i, name] of (m.tools ?? []).entries()) {
      messages.push({
        id: `r_${m.id}_${i}`,
        role: "user",
        ts: MESSAGES_AT_MS + 200,
        content: [
          { type: "tool_result", tool_use_id: `call_${m.id}_${i}`, name, content: [{ result: "ok" }] },
        ],
      });
    }
  }
  const doc = {
    version: 1,
    updated_at: new Date().toISOString(),
    agent: s.agent ?? "lead",
    sessionId: s.sessionId,
    messages,
    system_prompt: "You are Cline.",
  };
  const path = docPath(sessionsDir, s.sessionId);
  writeFileSync(path, `${JSON.stringify(doc, null, 2)}\n`);
  return path;
}

export interface Components {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** The cache rule (clinecli seed): cache counts inside inputTokens are a subset, else additive. */
export function componentsOf(m: Metrics): Components {
  const cache = m.cacheReadTokens + m.cacheWriteTokens;
  return {
    input: cache <= m.inputTokens ? m.inputTokens - cache : m.inputTokens,
    output: m.outputTokens,
    cacheRead: m.cacheReadTokens,
    cacheWrite: m.cacheWriteTokens,
  };
}

/** Ground truth per token type over sessions: what `sum by (type)` must show. */
export function truthByType(sessions: readonly SessionSpec[]): Record<string, number> {
  const out: Record<string, number> = { input: 0, output: 0, cache_read: 0, cache_write: 0 };
  for (const s of sessions) {
    for (const m of s.messages) {
      if (!m.metrics) continue;
      const c = componentsOf(m.metrics);
      out.input = (out.input ?? 0) + c.input;
      out.output = (out.output ?? 0) + c.output;
      out.cache_read = (out.cache_read ?? 0) + c.cacheRead;
      out.cache_write = (out.cache_write ?? 0) + c.cacheWrite;
    }
  }
  return out;
}

/** Deterministic metrics for message `i` (cache counts always a subset of the input). */
export function metricsFor(i: number): Metrics {
  const input = 1000 + ((i * 7919) % 5000);
  return {
    inputTokens: input,
    outputTokens: 10 + ((i * 104729) % 700),
    cacheReadTokens: (i * 31) % 400,
    cacheWriteTokens: (i * 17) % 300,
  };
}

/**
 * Session `n` of a restart test: id `17960000<n, 5 digits>_<tag>`, cwd `/home/u/p<n % 2>`, and
 * `messages` priced responses, every other one calling read_files and run_commands.
 */
export function toolSession(n: number, messages: number, tag: string): SessionSpec {
  return {
    sessionId: `17960000${String(n).padStart(5, "0")}_${tag}`,
    cwd: `/home/u/p${n % 2}`,
    messages: Array.from({ length: messages }, (_, i) => ({
      id: `msg_${i}`,
      model: "claude-sonnet-4-5-20250929",
      provider: "anthropic",
      metrics: metricsFor(n * 100 + i),
      tools: i % 2 === 0 ? ["read_files", "run_commands"] : [],
    })),
  };
}
