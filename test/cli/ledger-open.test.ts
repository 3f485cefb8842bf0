import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveClinePaths } from "../../src/adapter/cline/paths.ts";
import { deriveInstanceId } from "../../src/ledger/identity.ts";
import { LEDGER_FILE, Ledger } from "../../src/ledger/ledger.ts";
import { runCli } from "../helpers/cli.ts";
import { makeTree } from "../helpers/cline-tree.ts";
import { damageIndex } from "../helpers/ledger-damage.ts";

let dir: string;
let env: Record<string, string>;
let home: string;
const state = () => join(dir, "state");
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "cli-ledger-"));
  const tree = makeTree(join(dir, "home"), [
    {
      id: "1796000000000_aaaaa",
      cwd: "/w",
      messages: [
        { id: "m1", metrics: { inputTokens: 5, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 } },
      ],
    },
  ]);
  home = tree.home;
  env = { HOME: home, CLINE_OTEL_STATE_DIR: state() };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function instanceId(): string {
  const l = Ledger.open(state(), { readOnly: true });
  try {
    return l.instanceId;
  } finally {
    l.close();
  }
}

describe("the ledger a command opens", () => {
  it("gets the instance id of this machine and these Cline dirs, again after it is lost and rebuilt", () => {
    expect(runCli(["report", "--json"], env).status).toBe(0);
    const cline = resolveClinePaths({}, {}, home);
    const want = deriveInstanceId([cline.sessions.path, cline.db.path]);
    expect(instanceId()).toBe(want);
    rmSync(state(), { recursive: true, force: true });
    expect(runCli(["report", "--json"], env).status).toBe(0);
    expect(instanceId()).toBe(want);
  });

  it("--check-ledger verifies the whole file: a damaged ledger is refused with the fix, and left alone", () => {
    expect(runCli(["report", "--json"], env).status).toBe(0);
    // Damage an index's pages behind SQLite's back; a cleanly closed ledger is not checked at open.
    damageIndex(join(state(), LEDGER_FILE), "events_ts");
    const before = readFileSync(join(state(), LEDGER_FILE));
    const r = runCli(["report", "--json", "--no-collect", "--check-ledger"], env);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("is corrupt");
    expect(r.stderr).toContain(`mv ${join(state(), LEDGER_FILE)}`);
    expect(readFileSync(join(state(), LEDGER_FILE)).equals(before)).toBe(true);
  });
});
