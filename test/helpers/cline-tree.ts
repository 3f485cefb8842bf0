import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { CLINE_SESSIONS_DDL } from "../adapter/cline/helpers/cline-db.ts";

/** Cline's sessions table (docs/cline-format.md §6), as cline@3.0.65 creates it: one copy, shared. */
export const SESSIONS_DDL = CLINE_SESSIONS_DDL;

export interface Metrics {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  cost?: number;
}

export interface MsgSpec {
  id: string;
  metrics?: Metrics;
  tools?: string[];
  /** Its tools get no tool_result (a run cut off): they end when their document is quiet. */
  unanswered?: boolean;
  model?: string;
  provider?: string;
  ts?: number;
}

/** A messages document shaped like the real CLI's, with text everywhere the allow-list skips. */
export function messagesDoc(
  sessionId: string,
  agent: string,
  msgs: MsgSpec[],
  filler = "lorem ipsum",
): object {
  const messages: object[] = [
    {
      id: `${sessionId}-u0`,
      role: "user",
      ts: 1,
      content: [{ type: "text", text: `<user_input>${filler}</user_input>` }],
    },
  ];
  for (const m of msgs) {
    messages.push({
      id: m.id,
      role: "assistant",
      ts: m.ts ?? 1_796_018_200_000,
      content: [
        { type: "thinking", thinking: filler },
        { type: "text", text: filler },
        ...(m.tools ?? []).map((t, i) => ({
          type: "tool_use",
          id: `${m.id}_t${i}`,
          name: t,
          input: { commands: [filler] },
        })),
      ],
      modelInfo: { id: m.model ?? "mock-model", provider: m.provider ?? "openai-compatible" },
      ...(m.metrics ? { metrics: m.metrics } : {}),
    });
    for (const [i, t] of (m.unanswered ? [] : (m.tools ?? [])).entries()) {
      messages.push({
        id: `${m.id}_r${i}`,
        role: "user",
        ts: 2,
        content: [
          { type: "tool_result", tool_use_id: `${m.id}_t${i}`, name: t, content: [{ result: filler }] },
        ],
      });
    }
  }
  return {
    version: 1,
    updated_at: "2026-11-30T05:56:40.728Z",
    agent,
    sessionId,
    messages,
    system_prompt: filler,
  };
}

export interface SessionSpec {
  id: string;
  cwd: string;
  /** Lead messages. */
  messages: MsgSpec[];
  /** Sub-agent documents in the root folder: agentId -> messages. */
  subagents?: Record<string, MsgSpec[]>;
  indexed?: boolean;
  sidecar?: boolean;
  /** The session's `source` in its index row and sidecar (default `cli`, as the CLI writes). */
  source?: string;
}

export interface Tree {
  home: string;
  clineDir: string;
  sessionsDir: string;
  dbDir: string;
}

export function treeAt(home: string): Tree {
  const clineDir = join(home, ".cline");
  return {
    home,
    clineDir,
    sessionsDir: join(clineDir, "data", "sessions"),
    dbDir: join(clineDir, "data", "db"),
  };
}

export function writeSession(tree: Tree, s: SessionSpec, filler?: string): string[] {
  const dir = join(tree.sessionsDir, s.id);
  mkdirSync(dir, { recursive: true });
  const lead = join(dir, `${s.id}.messages.json`);
  writeFileSync(lead, `${JSON.stringify(messagesDoc(s.id, "lead", s.messages, filler), null, 2)}\n`);
  const written = [lead];
  if (s.sidecar !== false) {
    writeFileSync(
      join(dir, `${s.id}.json`),
      JSON.stringify({
        version: 1,
        session_id: s.id,
        source: s.source ?? "cli",
        cwd: s.cwd,
        prompt: filler ?? "p",
        metadata: { usage: { inputTokens: 999999 } },
      }),
    );
  }
  for (const [agentId, msgs] of Object.entries(s.subagents ?? {})) {
    const p = join(dir, `${agentId}.messages.json`);
    writeFileSync(p, JSON.stringify(messagesDoc(`${s.id}__${agentId}`, "subagent", msgs, filler)));
    written.push(p);
  }
  return written;
}

/** Write sessions and an index db naming the indexed ones; `checkpoint` leaves no -wal/-shm behind. */
export function makeTree(
  home: string,
  sessions: SessionSpec[],
  opts: { checkpoint?: boolean; filler?: string } = {},
): Tree {
  const tree = treeAt(home);
  mkdirSync(tree.sessionsDir, { recursive: true });
  mkdirSync(tree.dbDir, { recursive: true });
  for (const s of sessions) writeSession(tree, s, opts.filler);
  const db = new Database(join(tree.dbDir, "sessions.db"));
  db.pragma("journal_mode = WAL");
  db.exec(SESSIONS_DDL);
  const ins = db.prepare(
    `INSERT INTO sessions (session_id, source, pid, started_at, status, interactive, provider, model, cwd, workspace_root,
      enable_tools, enable_spawn, enable_teams, is_subagent, parent_session_id, metadata_json, hook_path, messages_path, updated_at)
     VALUES (?, ?, 1, 'x', 'completed', 0, 'p', 'm', ?, ?, 1, 1, 0, ?, ?, ?, '', ?, 'x')`,
  );
  for (const s of sessions) {
    if (s.indexed === false) continue;
    const usage = JSON.stringify({ usage: { inputTokens: 123456789 } });
    const source = s.source ?? "cli";
    ins.run(
      s.id,
      source,
      s.cwd,
      s.cwd,
      0,
      null,
      usage,
      join(tree.sessionsDir, s.id, `${s.id}.messages.json`),
    );
    for (const agentId of Object.keys(s.subagents ?? {})) {
      ins.run(
        `${s.id}__${agentId}`,
        source,
        s.cwd,
        s.cwd,
        1,
        s.id,
        "{}",
        join(tree.sessionsDir, s.id, `${agentId}.messages.json`),
      );
    }
  }
  if (opts.checkpoint !== false) db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  return tree;
}
