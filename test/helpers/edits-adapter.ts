/**
 * A test adapter for the generic side of file edits (issue 29): no Cline format. Its world is a
 * folder of JSON files, one per "session", each a list of steps `{ n, decision, added, removed,
 * exact }`; a step is one usage event, one tool call (final: its result in the same read) and one
 * file edit of that call. The adapter reads a file whole (a file being rewritten is retried), and
 * its keys are stable, so a re-read collapses on them as with a real adapter. `truthOf` is what
 * the steps say the ledger must count.
 */
import { readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type {
  Adapter,
  EditRecord,
  Observation,
  Source,
  ToolCall,
  UsageEvent,
} from "../../src/adapter/types.ts";
import { docSignals, result } from "./events.ts";

export interface EditStep {
  readonly n: number;
  readonly decision: "accepted" | "rejected" | "failed";
  readonly added: number;
  readonly removed: number;
  readonly exact: boolean;
}

/** A session file written atomically (temp + rename), as a careful writer does. */
export function writeEditSession(dir: string, session: string, steps: readonly EditStep[]): void {
  const tmp = join(dir, `.${session}.tmp`);
  writeFileSync(tmp, JSON.stringify(steps));
  renameSync(tmp, join(dir, `${session}.json`));
}

/** A step's rows, with stable keys. */
function rowsOf(session: string, s: EditStep, path: string, baseMs: number) {
  const ts = baseMs + s.n * 1000;
  const dedupKey = `test|${session}|lead|m${s.n}`;
  const event: UsageEvent = {
    dedupKey,
    sessionId: session,
    agent: "lead",
    messageId: `m${s.n}`,
    timestampMs: ts,
    model: "m1",
    provider: "p1",
    project: "/work/edits",
    input: 100 + s.n,
    output: 10,
    cacheRead: 0,
    cacheWrite: 0,
    total: 110 + s.n,
    cacheBranch: "subset",
    recordedCost: null,
    toolCallCount: 1,
    sourcePath: path,
    client: "cli",
  };
  const call: ToolCall = {
    callKey: `test|${session}|lead|c${s.n}`,
    usageKey: dedupKey,
    sessionId: session,
    agent: "lead",
    toolName: "editor",
    timestampMs: ts,
    divisor: 1,
    model: "m1",
    provider: "p1",
    project: "/work/edits",
    sourcePath: path,
    messageId: `m${s.n}`,
    toolUseId: `toolu_${session}_${s.n}`,
    client: "cli",
  };
  const edit: EditRecord = {
    editKey: `${call.callKey}|0`,
    callKey: call.callKey,
    usageKey: dedupKey,
    sessionId: session,
    agent: "lead",
    toolName: "editor",
    operation: s.n % 3 === 0 ? "create" : "modify",
    decision: s.decision,
    source: s.decision === "rejected" ? "user" : "auto",
    language: "typescript",
    linesAdded: s.added,
    linesRemoved: s.removed,
    exact: s.exact,
    timestampMs: ts,
    model: "m1",
    provider: "p1",
    project: "/work/edits",
    sourcePath: path,
    client: "cli",
  };
  return { event, call, edit };
}

export function editsAdapter(dir: string, baseMs: number): Adapter {
  const read = (source: Source): Observation => {
    const path = source.path;
    const session = path.slice(path.lastIndexOf("/") + 1, -".json".length);
    try {
      const st = statSync(path);
      const steps = JSON.parse(readFileSync(path, "utf8")) as EditStep[];
      const rows = steps.map((s) => rowsOf(session, s, path, baseMs));
      const calls = rows.map((r) => r.call);
      return {
        status: "read",
        source,
        checkpoint: { path, size: st.size, mtimeNs: String(st.mtimeMs), ino: st.ino, dev: st.dev },
        events: rows.map((r) => r.event),
        toolCalls: calls,
        problems: [],
        signals: docSignals(
          calls.map((c) => result(c)),
          { sessionId: session, rootSessionId: session, agent: "lead" },
        ),
        edits: rows.map((r) => r.edit),
      };
    } catch (e) {
      return { status: "failed", source, problem: { path, code: "unreadable", detail: String(e) } };
    }
  };
  return {
    id: "test-edits",
    async discover() {
      const sources = readdirSync(dir)
        .filter((f) => f.endsWith(".json"))
        .map((f): Source => ({ adapterId: "test-edits", path: join(dir, f), origin: "walk", hint: {} }));
      return { sources, problems: [] };
    },
    async collectIncremental(source, checkpoint) {
      const st = statSync(source.path, { throwIfNoEntry: false });
      if (
        st !== undefined &&
        checkpoint !== undefined &&
        checkpoint.size === st.size &&
        checkpoint.mtimeNs === String(st.mtimeMs) &&
        checkpoint.ino === st.ino
      )
        return { status: "unchanged", source, checkpoint };
      return read(source);
    },
  };
}

/** What the steps of every session say: lines by decision and type, edits by decision, the edit records. */
export function truthOf(sessions: ReadonlyMap<string, readonly EditStep[]>) {
  const lines: Record<string, number> = {};
  const decisions: Record<string, number> = {};
  const edits: string[] = [];
  for (const [session, steps] of sessions)
    for (const s of steps) {
      decisions[s.decision] = (decisions[s.decision] ?? 0) + 1;
      edits.push(`toolu_${session}_${s.n}/${s.decision}`);
      if (s.decision === "failed") continue;
      lines[`${s.decision}|added`] = (lines[`${s.decision}|added`] ?? 0) + s.added;
      lines[`${s.decision}|removed`] = (lines[`${s.decision}|removed`] ?? 0) + s.removed;
    }
  return { lines, decisions, edits: edits.sort() };
}
