import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportJson, runCli } from "../helpers/cli.ts";
import { makeTree, messagesDoc, type SessionSpec } from "../helpers/cline-tree.ts";

const M = (i: number, o: number, r = 0, w = 0) => ({
  inputTokens: i,
  outputTokens: o,
  cacheReadTokens: r,
  cacheWriteTokens: w,
});

const SESSIONS: SessionSpec[] = [
  {
    id: "1796000000000_aaaaa",
    cwd: "/work/alpha",
    messages: [
      { id: "msg_a1", metrics: M(1000, 100, 400, 0), tools: ["run_commands", "read_files"], model: "gpt-x" },
      { id: "msg_a2", metrics: M(2000, 200, 1500, 0), model: "gpt-x" },
      { id: "error_1" },
    ],
    subagents: {
      agent_1796_abcdef: [{ id: "msg_s1", metrics: M(300, 30, 0, 0), tools: ["editor"], model: "gpt-x" }],
    },
  },
  {
    id: "1796000000001_bbbbb",
    cwd: "/work/beta",
    indexed: false,
    messages: [
      {
        id: "msg_b1",
        metrics: M(7952, 323, 7002, 729),
        tools: ["run_commands"],
        model: "claude-sonnet-4-5-20250929",
        provider: "anthropic",
      },
      { id: "msg_b2", tools: ["editor"], model: "claude-sonnet-4-5-20250929", provider: "anthropic" },
    ],
  },
];

let dir: string;
let env: Record<string, string>;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "report-"));
  const tree = makeTree(join(dir, "home"), SESSIONS);
  env = { HOME: tree.home, CLINE_OTEL_STATE_DIR: join(dir, "state") };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("cline-otel report", () => {
  it("--json totals are the per-message metrics after the cache rule, never the running totals", () => {
    const r = reportJson(env);
    // input components: 600 + 500 + 300 + 221; cache: 400 + 1500 + 7002 read, 729 write
    expect(r.totals).toEqual({
      input: 600 + 500 + 300 + 221,
      output: 100 + 200 + 30 + 323,
      cacheRead: 400 + 1500 + 7002,
      cacheWrite: 729,
      events: 4,
      toolCalls: 5,
      // Only claude-sonnet-4-5 on anthropic is priced: 221 in, 323 out, 7002 read, 729 write at $3/$15/$0.30/$3.75 per M.
      cost: expect.closeTo(0.01034235, 12),
      unpricedEvents: 3,
      // The two `editor` calls (msg_s1, msg_b2) are edits whose input holds no text: accepted (their
      // results succeeded), no lines (the edits have their own tests).
      linesAdded: 0,
      linesRemoved: 0,
      editsAccepted: 2,
      editsRejected: 0,
      editsFailed: 0,
      acceptanceRate: 1,
      // The lead's timeline, the session's start; no command of it made a commit.
      activeUserSeconds: expect.any(Number),
      activeAgentSeconds: expect.any(Number),
      commits: 0,
      pullRequests: 0,
    });
  });

  it("prices from a --prices file make unknown costs known, and bad files name the line", () => {
    const file = join(dir, "prices.json");
    writeFileSync(
      file,
      JSON.stringify({ prices: { "openai-compatible": { "gpt-x": { input: 1, output: 2 } } } }),
    );
    const r = runCli(["report", "--json", "--prices", file], env);
    expect(r.status).toBe(0);
    const t = JSON.parse(r.stdout).totals;
    expect(t.unpricedEvents).toBe(0);
    // gpt-x: input 600+500+300 at $1, output 330 at $2, cache read 1900 at 0 (default), per million
    expect(t.cost).toBeCloseTo(0.01034235 + (1400 * 1 + 330 * 2) / 1e6, 12);
    const bad = join(dir, "bad-prices.json");
    writeFileSync(bad, '{\n  "prices": {\n    "p": { "m": { "input": -1, "output": 2 } }\n  }\n}\n');
    const e = runCli(["report", "--prices", bad], env);
    expect(e.status).toBe(2);
    expect(e.stderr).toMatch(/bad-prices\.json:3:/);
  });

  it("the table marks costs it does not know", () => {
    const r = runCli(["report", "--by", "provider"], env);
    expect(r.stdout).toMatch(/^anthropic\s.*\$0\.0103\s/m);
    expect(r.stdout).toMatch(/^openai-compatible\s.*unknown\s/m);
    expect(r.stdout).toMatch(/cost is unknown, not zero/);
  });

  it("groups by project, taking a walked session's project from its sidecar", () => {
    const r = reportJson(env, ["project"]);
    const byProject = Object.fromEntries(r.rows.map((row) => [row.project, row.events]));
    expect(byProject).toEqual({ "/work/alpha": 3, "/work/beta": 1 });
  });

  it("groups by agent and model", () => {
    const r = reportJson(env, ["agent", "model"]);
    expect(r.rows.map((x) => [x.agent, x.model, x.events])).toEqual([
      ["lead", "claude-sonnet-4-5-20250929", 1],
      ["lead", "gpt-x", 2],
      ["subagent", "gpt-x", 1],
    ]);
  });

  it("--by takes a comma list as well as separate words, each name checked, the bad one named", () => {
    const words = reportJson(env, ["agent", "model"]);
    const json = (args: string[]) => {
      const r = runCli(["report", "--json", ...args], env);
      expect(r.status, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as typeof words;
    };
    expect(json(["--by", "agent,model"]).rows).toEqual(words.rows);
    expect(json(["--by", "agent, model"]).rows).toEqual(words.rows);
    expect(json(["--by", "agent", "--by", "model"]).rows).toEqual(words.rows);
    // Mixed: a comma list, then a word; the order is kept (time first, as the report sorts).
    const three = json(["--by", "client,agent", "model"]);
    expect(three.rows.map((x) => [x.client, x.agent, x.model])).toEqual(
      words.rows.map((x) => ["cli", x.agent, x.model]),
    );
    for (const [arg, bad] of [
      ["client,modl", "'modl'"],
      ["colour,client", "'colour'"],
      ["client,,x", "'x'"],
    ] as const) {
      const r = runCli(["report", "--by", arg], env);
      expect(r.status, arg).toBe(2);
      expect(r.stderr.trim().split("\n"), arg).toHaveLength(1);
      expect(r.stderr).toContain(`${bad} is not a report dimension`);
      expect(r.stderr).toMatch(
        /choose from day, week, month, model, provider, project, session, agent, tool, client/,
      );
    }
    expect(runCli(["report", "--by", ","], env).status).toBe(2);
  });

  it("--by tool splits each message's tokens over its calls and the rows sum to the totals", () => {
    const r = reportJson(env, ["tool"]);
    const rows = Object.fromEntries(r.rows.map((x) => [x.tool, x]));
    expect(rows.run_commands).toMatchObject({ toolCalls: 2, input: 300 + 221, cacheRead: 200 + 7002 });
    expect(rows.read_files).toMatchObject({ toolCalls: 1, input: 300 });
    expect(rows.editor).toMatchObject({ toolCalls: 2, input: 300 });
    expect(rows["(none)"]).toMatchObject({ toolCalls: 0, input: 500, events: 1 });
    for (const k of ["input", "output", "cacheRead", "cacheWrite", "toolCalls"] as const) {
      const sum = r.rows.reduce((a, x) => a + (x[k] as number), 0);
      expect(sum).toBeCloseTo(r.totals[k], 6);
    }
  });

  it("a table is printed without --json", () => {
    const r = runCli(["report", "--by", "model"], env);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/Model\s+Input\s+Output\s+Cache read\s+Cache write\s+Requests\s+Tool calls/);
    expect(r.stdout).toMatch(/Total\s+1,621/);
  });

  it("a second report reads nothing new and counts nothing twice", () => {
    const a = reportJson(env);
    const b = reportJson(env);
    expect(b.totals).toEqual(a.totals);
  });

  it("bad values get a one-line error naming the option, exit 2", () => {
    const r = runCli(["report", "--by", "color"], env);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--by/);
    const p = runCli(["report"], { ...env, CLINE_OTEL_LOG_LEVEL: "loud" });
    expect(p.status).toBe(2);
    expect(p.stderr.trim().split("\n")).toHaveLength(1);
    expect(p.stderr).toMatch(/CLINE_OTEL_LOG_LEVEL.*error, warn, info, debug/);
  });

  it("refuses a state dir inside Cline's directories", () => {
    const r = runCli(["report"], { ...env, CLINE_OTEL_STATE_DIR: join(dir, "home", ".cline", "otel") });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/never writes there/);
  });

  it("says where it looked when there is no Cline data", () => {
    const r = runCli(["report", "--json"], {
      HOME: join(dir, "nohome"),
      CLINE_OTEL_STATE_DIR: join(dir, "state2"),
    });
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/No Cline data found/);
    expect(r.stderr).toMatch(/CLINE_DIR, CLINE_DATA_DIR, CLINE_SESSION_DATA_DIR or CLINE_DB_DATA_DIR/);
    expect(JSON.parse(r.stdout).totals.events).toBe(0);
  });

  it("rejected metrics are counted and named, and the rest still counts", () => {
    const home = join(dir, "bad");
    const tree = makeTree(home, [{ id: "s_bad", cwd: "/w", messages: [{ id: "ok", metrics: M(5, 5) }] }]);
    const doc = messagesDoc("s_bad", "lead", [{ id: "ok", metrics: M(5, 5) }]) as { messages: object[] };
    doc.messages.push({ id: "neg", role: "assistant", ts: 1, content: [], metrics: M(-5, 5) });
    writeFileSync(join(tree.sessionsDir, "s_bad", "s_bad.messages.json"), JSON.stringify(doc));
    const r = runCli(["report", "--json"], { HOME: home, CLINE_OTEL_STATE_DIR: join(dir, "state3") });
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(
      /invalid-metrics: 1 \(e\.g\. .*s_bad\.messages\.json: message neg: metrics\.inputTokens is -5/,
    );
    expect(JSON.parse(r.stdout).totals.events).toBe(1);
  });
});

describe("cline-otel paths", () => {
  it("shows each directory, where it came from, and what discovery finds", () => {
    const r = runCli(["paths"], {
      ...env,
      CLINE_SESSION_DATA_DIR: join(dir, "home", ".cline", "data", "sessions"),
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^root\s+\S+\/home\/\.cline\s+exists\s+default/m);
    expect(r.stdout).toMatch(/^sessions\s+\S+sessions\s+exists\s+env \(CLINE_SESSION_DATA_DIR\)/m);
    expect(r.stdout).toMatch(/discovery: 3 message documents \(2 named by the index, 1 found by the walk\)/);
  });
});
