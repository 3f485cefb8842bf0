import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { reportJson, runCli } from "../helpers/cli.ts";
import { makeTree, type SessionSpec, type Tree } from "../helpers/cline-tree.ts";
import { treeFingerprint } from "../helpers/tree-hash.ts";

const M = (i: number, o: number, r = 0) => ({
  inputTokens: i,
  outputTokens: o,
  cacheReadTokens: r,
  cacheWriteTokens: 0,
});
const SESSIONS: SessionSpec[] = [
  { id: "s1", cwd: "/p1", messages: [{ id: "m1", metrics: M(100, 10, 50), tools: ["editor"] }] },
  {
    id: "s2",
    cwd: "/p2",
    messages: [{ id: "m1", metrics: M(200, 20) }],
    subagents: { agent_1_abcdef: [{ id: "m1", metrics: M(5, 5) }] },
  },
];

let dir: string;
let tree: Tree;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "ro-"));
  tree = makeTree(join(dir, "home"), SESSIONS);
});
afterEach(() => {
  execFileSync("chmod", ["-R", "u+w", dir]);
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({ HOME: tree.home, CLINE_OTEL_STATE_DIR: join(dir, "state") });

describe("strictly read-only", () => {
  it("a checkpointed WAL index with no -wal/-shm: nothing is created, nothing changes", () => {
    const db = join(tree.dbDir, "sessions.db");
    expect(existsSync(`${db}-wal`)).toBe(false);
    // The trap is real: a plain read-only SQLite open creates files next to the db.
    const probe = mkdtempSync(join(tmpdir(), "probe-"));
    execFileSync("cp", [db, join(probe, "sessions.db")]);
    const naive = new Database(join(probe, "sessions.db"), { readonly: true });
    naive.prepare("SELECT COUNT(*) FROM sessions").get();
    naive.close();
    const created = readdirSync(probe).filter((f) => f !== "sessions.db");
    rmSync(probe, { recursive: true });

    const before = treeFingerprint(tree.clineDir);
    const r = reportJson(env());
    expect(r.totals.events).toBe(3);
    expect(treeFingerprint(tree.clineDir)).toEqual(before);
    expect(readdirSync(tree.dbDir)).toEqual(["sessions.db"]);
    // The naive open left files behind, so this test is known to be able to fail.
    expect(created.sort()).toEqual(["sessions.db-shm", "sessions.db-wal"]);
  });

  it("a live writer (rows only in the WAL): all rows seen, nothing but the existing -shm touched", () => {
    const writer = new Database(join(tree.dbDir, "sessions.db"));
    try {
      writer.pragma("wal_autocheckpoint = 0");
      writer.prepare("UPDATE sessions SET cwd = '/p2-live' WHERE session_id LIKE 's2%'").run();
      expect(existsSync(join(tree.dbDir, "sessions.db-wal"))).toBe(true);
      const before = treeFingerprint(tree.clineDir, { shmByNameOnly: true });
      const r = reportJson(env(), ["project"]);
      expect(r.rows.map((x) => x.project)).toEqual(["/p1", "/p2-live"]);
      expect(treeFingerprint(tree.clineDir, { shmByNameOnly: true })).toEqual(before);
    } finally {
      writer.close();
    }
  });

  it("collects everything from a tree made read-only (chmod -R a-w), run as an unprivileged user", () => {
    const state = join(dir, "state-nobody");
    mkdirSync(state);
    chownSync(state, 65534, 65534);
    chmodSync(dir, 0o755);
    execFileSync("chmod", ["-R", "a-w,a+rX", tree.home]);
    const before = treeFingerprint(tree.clineDir);
    const r = runCli(
      ["report", "--json"],
      { ...env(), CLINE_OTEL_STATE_DIR: state },
      { uid: 65534, gid: 65534 },
    );
    expect(r.stderr).not.toMatch(/EACCES|permission/i);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).totals).toMatchObject({ events: 3, input: 50 + 200 + 5, toolCalls: 1 });
    expect(treeFingerprint(tree.clineDir)).toEqual(before);
  });
});
