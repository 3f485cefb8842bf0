import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClineAdapter } from "../../src/adapter/cline/adapter.ts";
import { resolveClinePaths } from "../../src/adapter/cline/paths.ts";
import { runPass } from "../../src/collector/pass.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { runCli } from "../helpers/cli.ts";
import { makeTree, type Tree } from "../helpers/cline-tree.ts";

const M = (i: number) => ({ inputTokens: i, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 });
let dir: string;
let tree: Tree;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "fs-"));
  chmodSync(dir, 0o755);
  tree = makeTree(join(dir, "home"), [
    { id: "a", cwd: "/a", messages: [{ id: "m", metrics: M(10) }] },
    { id: "b", cwd: "/b", messages: [{ id: "m", metrics: M(20) }] },
    { id: "c", cwd: "/c", messages: [{ id: "m", metrics: M(30) }] },
  ]);
});
afterEach(() => {
  chmodSync(join(tree.sessionsDir, "b"), 0o755);
  rmSync(dir, { recursive: true, force: true });
});

describe("filesystem trouble", () => {
  it("permission denied on one session: counted and named, the others collected (unprivileged user)", () => {
    chmodSync(join(tree.sessionsDir, "b"), 0o000);
    const state = join(dir, "state");
    mkdirSync(state);
    chownSync(state, 65534, 65534);
    const r = runCli(
      ["report", "--json"],
      { HOME: tree.home, CLINE_OTEL_STATE_DIR: state },
      { uid: 65534, gid: 65534 },
    );
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).totals).toMatchObject({ events: 2, input: 40 });
    expect(r.stderr).toMatch(/(unreadable|index-path-unusable)[^\n]*\/b/);
  });

  it("a document vanishing between discovery and read is a counted, retried problem", async () => {
    const adapter = createClineAdapter(resolveClinePaths({}, {}, tree.home));
    const ledger = Ledger.open(join(dir, "state2"));
    try {
      const { sources } = await adapter.discover();
      unlinkSync(join(tree.sessionsDir, "c", "c.messages.json"));
      const results = await Promise.all(sources.map((s) => adapter.collectIncremental(s, undefined)));
      const failed = results.filter((o) => o.status === "failed");
      expect(failed).toHaveLength(1);
      expect(failed[0]?.status === "failed" && failed[0].problem.code).toBe("vanished");
      const pass = await runPass(adapter, ledger);
      expect(pass.eventsAdded).toBe(2);
    } finally {
      ledger.close();
    }
  });

  it("a session folder replaced by a file and a document replaced by a directory are skipped", async () => {
    rmSync(join(tree.sessionsDir, "a"), { recursive: true });
    writeFileSync(join(tree.sessionsDir, "a"), "now a file");
    unlinkSync(join(tree.sessionsDir, "c", "c.messages.json"));
    mkdirSync(join(tree.sessionsDir, "c", "c.messages.json"));
    const ledger = Ledger.open(join(dir, "state3"));
    try {
      const pass = await runPass(createClineAdapter(resolveClinePaths({}, {}, tree.home)), ledger);
      expect(pass.eventsAdded).toBe(1);
      expect(pass.problems.map((p) => p.code).sort()).toEqual(["index-path-unusable", "index-path-unusable"]);
    } finally {
      ledger.close();
    }
  });
});
