import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { captureDirOf, homeOf } from "../adapter/cline/captures/helpers.ts";
import { runCli } from "../helpers/cli.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "paths-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("cline-otel paths: capture directories", () => {
  it("lists every capture dir it resolved, whether each exists, and how many capture files they hold", () => {
    const caps = join(dir, "caps");
    cpSync(captureDirOf("captures"), caps, { recursive: true });
    const args = [
      "paths",
      "--cline-dir",
      join(homeOf("captures"), ".cline"),
      "--state-dir",
      join(dir, "state"),
    ];
    const env = { HOME: join(dir, "home"), CLINE_DATA_DIR: join(dir, "elsewhere") };
    const r = runCli([...args, "--capture-dir", caps], env);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^captures\\s+${caps}\\s+exists\\s+flag \\(--capture-dir\\)$`, "m"));
    expect(r.stdout).toMatch(
      /^captures\s+\S+\/elsewhere\/provider-request-captures\s+missing\s+env \(<CLINE_DATA_DIR>\/provider-request-captures\)$/m,
    );
    expect(r.stdout).toMatch(/^captures\s+\S+\/\.cline\/data\/provider-request-captures\s+missing\s+flag/m);
    expect(r.stdout).toMatch(/, 6 capture files$/m);

    const j = runCli([...args, "--json"], env);
    expect(j.status, j.stderr).toBe(0);
    const out = JSON.parse(j.stdout) as { captures: { path: string; exists: boolean }[]; discovery: unknown };
    expect(
      out.captures.map((d) => [d.path.endsWith("/elsewhere/provider-request-captures"), d.exists]),
    ).toEqual([
      [true, false],
      [false, false],
    ]);
    expect(out.discovery).toMatchObject({ captureFiles: 0 });
    // Looking creates nothing.
    expect(existsSync(join(dir, "state"))).toBe(false);
  });
});

describe("cline-otel paths: discovery", () => {
  it("counts message documents only (a compaction file next to one is not a message document)", async () => {
    const { makeTree } = await import("../helpers/cline-tree.ts");
    const { writeFileSync } = await import("node:fs");
    const tree = makeTree(join(dir, "home"), [
      { id: "s1", cwd: "/p", messages: [{ id: "m1" }], subagents: { a1: [] } },
      { id: "u1", cwd: "/q", messages: [], indexed: false },
    ]);
    writeFileSync(join(tree.sessionsDir, "s1", "s1.compaction.json"), "{}");
    const r = runCli(["paths", "--cline-dir", tree.clineDir, "--json"], { HOME: join(dir, "home") });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { discovery: unknown };
    expect(out.discovery).toMatchObject({ documents: 3, fromIndex: 2, fromWalk: 1, problems: 0 });
  });
});
