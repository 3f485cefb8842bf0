/**
 * Events and traces on data the REAL Cline CLI (3.0.65) wrote (fixtures/harness): `run --once`
 * over a copy of a committed fixture, into the in-process OTLP receiver. Expectations are derived
 * here from the documents with plain JSON.parse (test side) and from ground-truth.json, never from
 * the product's own helpers; the trace id follows its documented formula (docs/traces.md).
 */
import { createHash } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type LoadedGroundTruth,
  loadGroundTruth,
  messageDocuments,
  storedToolOutcomes,
} from "../../fixtures/harness/ground-truth.ts";
import { runCliAsync } from "../e2e/helpers/cli.ts";
import {
  type ReceivedLog,
  type ReceivedSpan,
  type Receiver,
  startReceiver,
} from "./helpers/otlp-receiver.ts";

interface Block {
  type: string;
  id?: string;
  tool_use_id?: string;
  name?: string;
  is_error?: boolean;
  text?: string;
}
interface Message {
  id: string;
  role: string;
  ts: number;
  content: Block[];
  metrics?: Record<string, number>;
}
interface Doc {
  agent: string;
  sessionId: string;
  messages: Message[];
}

const MS = 1_000_000n;
const ns = (ms: number) => BigInt(ms) * MS;
const durMs = (s: ReceivedSpan) => Number((s.endNs - s.startNs) / MS);
/** docs/traces.md: SHA-256("cline-otel.trace" NUL root session id), 128 bits. */
const traceIdOf = (root: string) =>
  createHash("sha256").update("cline-otel.trace\u0000").update(root).digest("hex").slice(0, 32);

const work = mkdtempSync(join(tmpdir(), "signals-real-cli-"));
let rx: Receiver;
beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(async () => {
  await rx.close();
  rmSync(work, { recursive: true, force: true });
});

/**
 * Quiet time 1 s: every committed document is older, so each open turn is final in the pass (docs/traces.md,
 * "When a span is sent"); a freshly regenerated fixture would otherwise hold its turns back for 15 minutes.
 */
const QUIET = "1";

function signalsEnv(home: string, state: string, quiet: string): Record<string, string> {
  return {
    HOME: home,
    CLINE_OTEL_QUIET_TIME: quiet,
    CLINE_OTEL_STATE_DIR: state,
    OTEL_METRICS_EXPORTER: "none",
    OTEL_LOGS_EXPORTER: "otlp",
    OTEL_TRACES_EXPORTER: "otlp",
    OTEL_EXPORTER_OTLP_ENDPOINT: rx.baseUrl,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
    OTEL_EXPORTER_OTLP_TIMEOUT: "3000",
    OTEL_BLRP_SCHEDULE_DELAY: "200",
    OTEL_BSP_SCHEDULE_DELAY: "200",
  };
}

interface Exported {
  readonly logs: ReceivedLog[];
  readonly spans: ReceivedSpan[];
}

/** `run --once` with the given HOME and state dir; what the receiver accepted during that run. */
async function runOnce(home: string, state: string, quiet = QUIET): Promise<Exported> {
  const logs0 = rx.logs.length;
  const spans0 = rx.spans.length;
  const r = await runCliAsync(["run", "--once"], signalsEnv(home, state, quiet));
  expect(r.status, r.stderr).toBe(0);
  return { logs: rx.logs.slice(logs0), spans: rx.spans.slice(spans0) };
}

/** A fresh copy of a fixture (the product only reads it; the copy keeps parallel files apart). */
function copyFixture(name: string, tag = name): { gt: LoadedGroundTruth; root: string; home: string } {
  const gt = loadGroundTruth(name);
  const root = join(work, tag);
  cpSync(gt.fixtureRoot, root, { recursive: true });
  return { gt, root, home: join(root, gt.env.HOME ?? "home") };
}

const docsUnder = (gt: LoadedGroundTruth, root: string): Doc[] =>
  messageDocuments(join(root, gt.layout.sessionsDir))
    .filter((f) => !f.includes("/before/"))
    .map((f) => JSON.parse(readFileSync(f, "utf8")) as Doc);

const isPrompt = (m: Message) => m.role === "user" && !m.content.some((b) => b.type === "tool_result");

/** What docs/traces.md's timing table says, computed from a document. */
interface Expect {
  chats: { session: string; messageId: string; startMs: number; endMs: number }[];
  tools: { session: string; callId: string; messageId: string; startMs: number; endMs: number }[];
  turns: { session: string; agent: string; promptId: string; startMs: number; endMs: number }[];
}
function expectedTiming(docs: readonly Doc[]): Expect {
  const out: Expect = { chats: [], tools: [], turns: [] };
  for (const doc of docs) {
    const ms = doc.messages;
    const resultTs = new Map<string, number>();
    for (const m of ms)
      for (const b of m.content)
        if (b.type === "tool_result" && b.tool_use_id) resultTs.set(b.tool_use_id, m.ts);
    ms.forEach((m, i) => {
      if (m.role === "assistant" && m.metrics && i > 0) {
        const start = Math.max(...ms.slice(0, i).map((x) => x.ts));
        out.chats.push({ session: doc.sessionId, messageId: m.id, startMs: start, endMs: m.ts });
      }
      for (const b of m.content) {
        if (b.type !== "tool_use" || !b.id) continue;
        const end = resultTs.get(b.id);
        if (end === undefined) throw new Error(`fixture: ${b.id} has no result`);
        out.tools.push({ session: doc.sessionId, callId: b.id, messageId: m.id, startMs: m.ts, endMs: end });
      }
    });
    const prompts = ms.map((m, i) => [m, i] as const).filter(([m]) => isPrompt(m));
    prompts.forEach(([p], k) => {
      const next = prompts[k + 1]?.[1] ?? ms.length;
      const last = ms[next - 1] as Message;
      out.turns.push({
        session: doc.sessionId,
        agent: doc.agent,
        promptId: p.id,
        startMs: p.ts,
        endMs: last.ts,
      });
    });
  }
  return out;
}

const op = (s: ReceivedSpan) => s.attributes["gen_ai.operation.name"];
const orphans = (spans: readonly ReceivedSpan[]) => {
  const ids = new Set(spans.map((s) => s.spanId));
  return spans.filter((s) => s.parentSpanId !== "" && !ids.has(s.parentSpanId));
};
const spanKey = (s: ReceivedSpan) =>
  `${s.traceId}/${s.spanId}/${s.parentSpanId}/${s.startNs}/${s.endNs}/${s.name}`;

describe("tool-error fixture: a tool call that really failed (is_error: true)", () => {
  let gt: LoadedGroundTruth;
  let docs: Doc[];
  let docPaths: string[];
  let out: Exported;
  let open: Exported;
  let closed: Exported;
  beforeAll(async () => {
    const c = copyFixture("tool-error");
    gt = c.gt;
    docs = docsUnder(gt, c.root);
    docPaths = messageDocuments(join(c.root, gt.layout.sessionsDir));
    const state = join(work, "tool-error.state");
    // First a pass while the document counts as busy (a quiet time it can never reach): its turn
    // stays open. Then a restart once it is quiet: only the turn is left to send.
    open = await runOnce(c.home, state, "999999999");
    closed = await runOnce(c.home, state);
    out = { logs: [...open.logs, ...closed.logs], spans: [...open.spans, ...closed.spans] };
  }, 60_000);

  it("an open turn: its requests and calls go first, naming it as parent; the turn follows once quiet, nothing twice", () => {
    expect(open.spans.filter((s) => op(s) === "invoke_agent")).toEqual([]);
    expect(open.spans).toHaveLength(gt.totals.requests + (gt.toolResults ?? []).length);
    expect(open.logs).toHaveLength(gt.totals.requests + (gt.toolResults ?? []).length);
    expect(new Set(open.spans.map((s) => s.parentSpanId)).size).toBe(1);
    expect(closed.spans.map(op)).toEqual(["invoke_agent"]);
    expect(closed.logs).toEqual([]);
    expect(closed.spans[0]?.spanId).toBe(open.spans[0]?.parentSpanId);
  });

  it("the fixture has failed and succeeding calls (ground truth from the stored document)", () => {
    const failed = (gt.toolResults ?? []).filter((t) => t.isError).map((t) => t.toolUseId);
    expect(failed).toEqual(["call_mock_f_1_1", "call_mock_f_2_0"]);
    expect((gt.toolResults ?? []).filter((t) => !t.isError).length).toBe(4);
    // Two more failed without is_error: a missing file and `exit 3` (`success: false` in their JSON).
    const outcomes = storedToolOutcomes(docPaths);
    expect([...outcomes].filter(([, o]) => o === "failure").map(([id]) => id)).toEqual([
      "call_mock_f_0_1",
      "call_mock_f_1_0",
      "call_mock_f_1_1",
      "call_mock_f_2_0",
    ]);
  });

  it("cline.tool_call events: outcome failure exactly for the failed calls (is_error, or success:false), success for the others", () => {
    const outcomes = storedToolOutcomes(docPaths);
    const calls = out.logs.filter((l) => l.eventName === "cline.tool_call");
    const byId = new Map(calls.map((l) => [l.attributes["gen_ai.tool.call.id"], l]));
    expect(calls).toHaveLength(byId.size);
    expect([...byId.keys()].sort()).toEqual((gt.toolResults ?? []).map((t) => t.toolUseId).sort());
    for (const t of gt.toolResults ?? []) {
      const l = byId.get(t.toolUseId);
      expect(l?.attributes["cline.tool.outcome"], t.toolUseId).toBe(outcomes.get(t.toolUseId));
      expect(l?.attributes["gen_ai.tool.name"]).toBe(t.name);
    }
  });

  it("execute_tool spans: status ERROR and error.type exactly for the failed calls", () => {
    const outcomes = storedToolOutcomes(docPaths);
    const tools = out.spans.filter((s) => op(s) === "execute_tool");
    expect(tools).toHaveLength((gt.toolResults ?? []).length);
    for (const t of gt.toolResults ?? []) {
      const s = tools.find((x) => x.attributes["gen_ai.tool.call.id"] === t.toolUseId);
      expect(s?.name).toBe(`execute_tool ${t.name}`);
      const failed = outcomes.get(t.toolUseId) === "failure";
      expect(s?.statusCode, t.toolUseId).toBe(failed ? 2 : 0);
      expect(s?.attributes["error.type"]).toBe(failed ? "tool_error" : undefined);
      expect(s?.attributes["cline.tool.outcome"]).toBe(outcomes.get(t.toolUseId));
      expect(s?.attributes["cline.tool.cancelled"]).not.toBe(true);
    }
  });

  it("tool durations: tool_result message ts minus calling message ts, on the span and the event", () => {
    const want = expectedTiming(docs).tools;
    expect(want).toHaveLength(6);
    for (const w of want) {
      expect(w.endMs - w.startMs, w.callId).toBeGreaterThanOrEqual(0);
      const s = out.spans.find(
        (x) => x.attributes["gen_ai.tool.call.id"] === w.callId && op(x) === "execute_tool",
      );
      expect(s?.startNs, w.callId).toBe(ns(w.startMs));
      expect(s?.endNs, w.callId).toBe(ns(w.endMs));
      const l = out.logs.find((x) => x.attributes["gen_ai.tool.call.id"] === w.callId);
      expect(l?.attributes["cline.duration_ms"], w.callId).toBe(w.endMs - w.startMs);
      expect(l?.timeNs).toBe(ns(w.startMs));
      expect(l?.attributes["cline.message.id"]).toBe(w.messageId);
      // The event carries its span's ids.
      expect(l?.spanId).toBe(s?.spanId);
    }
  });

  it("chat spans start at the latest earlier ts of their document and end at their own ts", () => {
    const want = expectedTiming(docs).chats;
    const chats = out.spans.filter((s) => op(s) === "chat");
    expect(chats).toHaveLength(gt.totals.requests);
    expect(want).toHaveLength(gt.totals.requests);
    for (const w of want) {
      const s = chats.find((x) => x.attributes["cline.message.id"] === w.messageId);
      expect(s?.kind).toBe(3);
      expect(s?.startNs, w.messageId).toBe(ns(w.startMs));
      expect(s?.endNs, w.messageId).toBe(ns(w.endMs));
      expect(s?.attributes["cline.start.known"]).toBe(true);
      const l = out.logs.find(
        (x) => x.eventName === "cline.api_request" && x.attributes["cline.message.id"] === w.messageId,
      );
      expect(l?.attributes["cline.duration_ms"]).toBe(w.endMs - w.startMs);
      expect(durMs(s as ReceivedSpan)).toBe(w.endMs - w.startMs);
    }
  });

  it("one trace: one invoke_agent turn holding every chat and tool span, no orphans", () => {
    const root = gt.rootSessionIds[0] as string;
    expect(new Set(out.spans.map((s) => s.traceId))).toEqual(new Set([traceIdOf(root)]));
    const turns = out.spans.filter((s) => op(s) === "invoke_agent");
    const [turn] = expectedTiming(docs).turns;
    expect(turns).toHaveLength(1);
    expect(turns[0]?.parentSpanId).toBe("");
    expect(turns[0]?.startNs).toBe(ns(turn?.startMs ?? -1));
    expect(turns[0]?.endNs).toBe(ns(turn?.endMs ?? -1));
    for (const s of out.spans.filter((x) => x !== turns[0])) expect(s.parentSpanId).toBe(turns[0]?.spanId);
    expect(orphans(out.spans)).toEqual([]);
    expect(new Set(out.spans.map((s) => s.spanId)).size).toBe(out.spans.length);
  });
});

describe.each(["subagents", "teammate"])("%s fixture: sub-agent work in the root session's trace", (name) => {
  let gt: LoadedGroundTruth;
  let docs: Doc[];
  let out: Exported;
  beforeAll(async () => {
    const c = copyFixture(name);
    gt = c.gt;
    docs = docsUnder(gt, c.root);
    out = await runOnce(c.home, join(work, `${name}.state`));
  }, 60_000);

  it("every span is in the root session's trace, once, and every parent id was exported", () => {
    const root = gt.rootSessionIds[0] as string;
    expect(gt.rootSessionIds).toHaveLength(1);
    expect(new Set(out.spans.map((s) => s.traceId))).toEqual(new Set([traceIdOf(root)]));
    for (const s of out.spans) expect(s.attributes["cline.session.root_id"]).toBe(root);
    expect(new Set(out.spans.map((s) => s.spanId)).size).toBe(out.spans.length);
    expect(orphans(out.spans)).toEqual([]);
    const want = expectedTiming(docs);
    expect(out.spans).toHaveLength(want.chats.length + want.tools.length + want.turns.length);
  });

  it("a sub-agent's turn is a child of the lead turn running when it began; its spans are its children", () => {
    const want = expectedTiming(docs);
    const turnSpan = (promptId: string) =>
      out.spans.find((s) => op(s) === "invoke_agent" && s.attributes["cline.turn.id"] === promptId);
    const lead = want.turns.filter((t) => t.agent === "lead");
    const others = want.turns.filter((t) => t.agent !== "lead");
    expect(lead).toHaveLength(1);
    expect(others.length).toBeGreaterThan(0);
    const leadSpan = turnSpan(lead[0]?.promptId ?? "");
    expect(leadSpan?.parentSpanId).toBe("");
    expect(leadSpan?.attributes["gen_ai.agent.name"]).toBe("lead");
    for (const t of others) {
      const s = turnSpan(t.promptId);
      expect(s?.attributes["gen_ai.agent.name"]).toBe(t.agent);
      expect(s?.attributes["session.id"]).toBe(t.session);
      expect(s?.parentSpanId, t.promptId).toBe(leadSpan?.spanId);
      expect(s?.startNs).toBe(ns(t.startMs));
      expect(s?.endNs).toBe(ns(t.endMs));
      // Nested by time: the sub-agent began inside the lead's turn.
      expect(t.startMs).toBeGreaterThanOrEqual(lead[0]?.startMs ?? Infinity);
    }
    // Every chat and tool span hangs under the turn of its own session (one turn per document here).
    for (const s of out.spans.filter((x) => op(x) !== "invoke_agent")) {
      const t = want.turns.find((x) => x.session === s.attributes["session.id"]);
      expect(s.parentSpanId).toBe(turnSpan(t?.promptId ?? "")?.spanId);
    }
  });

  it("chat and tool spans follow the timing rules in every document (sub-agents included)", () => {
    const want = expectedTiming(docs);
    for (const w of want.chats) {
      const s = out.spans.find((x) => op(x) === "chat" && x.attributes["cline.message.id"] === w.messageId);
      expect([s?.startNs, s?.endNs], w.messageId).toEqual([ns(w.startMs), ns(w.endMs)]);
    }
    for (const w of want.tools) {
      const s = out.spans.find(
        (x) => op(x) === "execute_tool" && x.attributes["gen_ai.tool.call.id"] === w.callId,
      );
      expect(w.endMs).toBeGreaterThanOrEqual(w.startMs);
      expect([s?.startNs, s?.endNs], w.callId).toEqual([ns(w.startMs), ns(w.endMs)]);
      expect(s?.statusCode).toBe(0);
    }
  });
});

describe("resumed fixture: the resumed turn in the same trace, nothing sent twice across a restart", () => {
  /**
   * The fixture holds the final tree only; the tree before the resume is its document cut before
   * the second prompt (Cline's resume rewrites the document keeping earlier messages and their
   * ids and ts unchanged, docs/cline-format.md).
   */
  let gt: LoadedGroundTruth;
  let docFile: string;
  let full: string;
  let before: Exported;
  let after: Exported;
  let fresh: Exported;
  beforeAll(async () => {
    const c = copyFixture("resumed");
    gt = c.gt;
    docFile = messageDocuments(join(c.root, gt.layout.sessionsDir))[0] as string;
    full = readFileSync(docFile, "utf8");
    const doc = JSON.parse(full) as Doc;
    const second = doc.messages.findIndex((m, i) => i > 0 && isPrompt(m));
    writeFileSync(docFile, JSON.stringify({ ...doc, messages: doc.messages.slice(0, second) }, null, 2));
    const state = join(work, "resumed.state");
    before = await runOnce(c.home, state);
    writeFileSync(docFile, full);
    // A new process on the same state dir: a restart between the two states.
    after = await runOnce(c.home, state);
    // The oracle: the final tree exported in one pass from a fresh state.
    const f = copyFixture("resumed", "resumed-fresh");
    fresh = await runOnce(f.home, join(work, "resumed-fresh.state"));
  }, 90_000);

  it("before the resume: the first turn complete (2 chats, 1 tool, 1 turn)", () => {
    expect(before.spans.map(op).sort()).toEqual(["chat", "chat", "execute_tool", "invoke_agent"]);
    expect(orphans(before.spans)).toEqual([]);
  });

  it("after the restart: only the resumed turn, in the same trace, its parents exported", () => {
    expect(after.spans.map(op).sort()).toEqual([
      "chat",
      "chat",
      "chat",
      "execute_tool",
      "execute_tool",
      "invoke_agent",
    ]);
    const trace = traceIdOf(gt.rootSessionIds[0] as string);
    for (const s of [...before.spans, ...after.spans]) expect(s.traceId).toBe(trace);
    expect(orphans(after.spans)).toEqual([]);
    const turns = [...before.spans, ...after.spans].filter((s) => op(s) === "invoke_agent");
    expect(new Set(turns.map((s) => s.attributes["cline.turn.id"])).size).toBe(2);
  });

  it("nothing sent twice; the two states together equal one pass over the final tree", () => {
    const both = [...before.spans, ...after.spans];
    expect(new Set(both.map((s) => s.spanId)).size).toBe(both.length);
    expect(both.map(spanKey).sort()).toEqual(fresh.spans.map(spanKey).sort());
    const logKey = (l: ReceivedLog) =>
      `${l.eventName}|${l.attributes["cline.message.id"]}|${l.attributes["gen_ai.tool.call.id"] ?? ""}|${l.timeNs}|${l.attributes["cline.duration_ms"]}`;
    const logs = [...before.logs, ...after.logs];
    expect(new Set(logs.map(logKey)).size).toBe(logs.length);
    expect(logs.map(logKey).sort()).toEqual(fresh.logs.map(logKey).sort());
    expect(logs.filter((l) => l.eventName === "cline.api_request")).toHaveLength(gt.totals.requests);
  });

  it("the resumed turn starts at its prompt; its first request at that prompt's ts", () => {
    const doc = JSON.parse(full) as Doc;
    const want = expectedTiming([doc]);
    expect(want.turns).toHaveLength(2);
    const t2 = want.turns[1];
    const s = after.spans.find((x) => op(x) === "invoke_agent");
    expect(s?.attributes["cline.turn.id"]).toBe(t2?.promptId);
    expect([s?.startNs, s?.endNs]).toEqual([ns(t2?.startMs ?? -1), ns(t2?.endMs ?? -1)]);
    const firstChat = want.chats.find((c) => c.startMs === t2?.startMs);
    expect(firstChat).toBeDefined();
    const c = after.spans.find(
      (x) => x.attributes["cline.message.id"] === firstChat?.messageId && op(x) === "chat",
    );
    expect(c?.startNs).toBe(ns(t2?.startMs ?? -1));
    expect(c?.parentSpanId).toBe(s?.spanId);
  });
});

describe("resume-snapshot fixture: the real tree between a run and its resume, then the final tree", () => {
  let gt: LoadedGroundTruth;
  let first: Exported;
  let second: Exported;
  let fresh: Exported;
  let beforeDoc: Doc;
  let finalDoc: Doc;
  beforeAll(async () => {
    gt = loadGroundTruth("resume-snapshot");
    const before = gt.before;
    if (!before) throw new Error("resume-snapshot: no before/ in ground truth");
    // One HOME path for both states (documents are keyed by path): the before-copy, then the final tree.
    const home = join(work, "resume-snapshot", "home");
    cpSync(join(gt.fixtureRoot, before.dir, "home"), home, { recursive: true });
    const state = join(work, "resume-snapshot.state");
    first = await runOnce(home, state);
    rmSync(home, { recursive: true, force: true });
    cpSync(join(gt.fixtureRoot, "home"), home, { recursive: true });
    second = await runOnce(home, state);
    const f = copyFixture("resume-snapshot", "resume-snapshot-fresh");
    fresh = await runOnce(f.home, join(work, "resume-snapshot-fresh.state"));
    const docOf = (dir: string) =>
      JSON.parse(
        readFileSync(messageDocuments(join(dir, gt.layout.sessionsDir))[0] as string, "utf8"),
      ) as Doc;
    beforeDoc = docOf(join(gt.fixtureRoot, before.dir));
    finalDoc = docOf(gt.fixtureRoot);
  }, 90_000);

  it("the resume kept every earlier message (id and ts) and wrote its prompt only with the answer", () => {
    expect(finalDoc.messages.slice(0, beforeDoc.messages.length).map((m) => [m.id, m.ts])).toEqual(
      beforeDoc.messages.map((m) => [m.id, m.ts]),
    );
    expect(beforeDoc.messages.filter(isPrompt)).toHaveLength(1);
    expect(finalDoc.messages.filter(isPrompt)).toHaveLength(2);
  });

  it("each state's spans once, in one trace, no orphans; together exactly one pass over the final tree", () => {
    const want = (d: Doc) => expectedTiming([d]);
    const w1 = want(beforeDoc);
    expect(first.spans).toHaveLength(w1.chats.length + w1.tools.length + w1.turns.length);
    const both = [...first.spans, ...second.spans];
    expect(new Set(both.map((s) => s.spanId)).size).toBe(both.length);
    expect(new Set(both.map((s) => s.traceId))).toEqual(new Set([traceIdOf(gt.rootSessionIds[0] as string)]));
    expect(orphans(first.spans)).toEqual([]);
    expect(orphans(both)).toEqual([]);
    expect(both.map(spanKey).sort()).toEqual(fresh.spans.map(spanKey).sort());
    const logs = [...first.logs, ...second.logs];
    expect(logs).toHaveLength(fresh.logs.length);
    expect(new Set(logs.map((l) => `${l.eventName}|${l.spanId}`)).size).toBe(logs.length);
    // The second pass sent only the resumed turn, and its first request starts at the new prompt.
    const w2 = want(finalDoc);
    const t2 = w2.turns[1];
    const turn = second.spans.filter((s) => op(s) === "invoke_agent");
    expect(turn.map((s) => s.attributes["cline.turn.id"])).toEqual([t2?.promptId]);
    expect([turn[0]?.startNs, turn[0]?.endNs]).toEqual([ns(t2?.startMs ?? -1), ns(t2?.endMs ?? -1)]);
    for (const c of w2.chats.filter((x) => x.endMs > (t2?.startMs ?? 0))) {
      const s = second.spans.find(
        (x) => op(x) === "chat" && x.attributes["cline.message.id"] === c.messageId,
      );
      expect([s?.startNs, s?.endNs], c.messageId).toEqual([ns(c.startMs), ns(c.endMs)]);
      expect(s?.parentSpanId).toBe(turn[0]?.spanId);
    }
  });
});
