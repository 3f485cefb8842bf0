import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
// @ts-expect-error plain JavaScript module without types, shipped in bin/
import { MIN_NODE, nodeVersionProblem } from "../../bin/check-node.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

describe("supported Node versions", () => {
  it("the bin's minimum is package.json's engines.node", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { engines: { node: string } };
    expect(pkg.engines.node).toBe(`>=${MIN_NODE}`);
  });

  it.each([
    ["20.20.2", true],
    ["22.14.9", true],
    ["22.15.0", false],
    ["22.23.5", false],
    ["24.0.0", false],
    ["26.1.0", false],
    ["18.0.0", true],
  ])("Node %s refused: %s", (version, refused) => {
    const problem = nodeVersionProblem(version);
    expect(problem !== undefined).toBe(refused);
    if (refused) expect(problem).toContain(`this is Node ${version}`);
  });

  it("the installed bin on an older Node prints one line naming the version and the fix, exit 2", () => {
    // Pretend to be Node 20 before the bin runs: the check must fire before anything is loaded.
    const fake = 'data:text/javascript,Object.defineProperty(process.versions,"node",{value:"20.20.2"})';
    const r = spawnSync(process.execPath, ["--import", fake, join(root, "bin/cline-otel.js"), "--version"], {
      encoding: "utf8",
    });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/needs Node >= 22\.15\.0 .*this is Node 20\.20\.2.*Install Node 22 or 24/);
  });

  it("runs on the Node this run was asked to test (CI sets CLINE_OTEL_EXPECT_NODE)", () => {
    const expected = process.env.CLINE_OTEL_EXPECT_NODE;
    if (expected === undefined) {
      expect(process.env.CI, "CI must say which Node it tests (CLINE_OTEL_EXPECT_NODE)").not.toBe("true");
    } else {
      expect(process.versions.node.split(".")[0]).toBe(expected);
    }
    expect(nodeVersionProblem(process.versions.node)).toBeUndefined();
  });
});

describe("better-sqlite3's native addon", () => {
  it("is the prebuilt N-API binary shipped in the package, loaded by this Node", () => {
    const db = new Database(":memory:");
    expect(db.prepare("select sqlite_version() as v").get()).toMatchObject({ v: expect.any(String) });
    db.close();
    const pkgDir = dirname(createRequire(import.meta.url).resolve("better-sqlite3/package.json"));
    // A compiled build/Release or build/Debug binary would shadow the prebuilt one (and may target
    // another Node's headers). npm may still leave an empty node-gyp build/ tree: that is harmless.
    for (const kind of ["Release", "Debug"]) {
      expect(existsSync(join(pkgDir, "build", kind, "better_sqlite3.node"))).toBe(false);
    }
    const report = process.report.getReport() as unknown as { sharedObjects: string[] };
    const loaded = report.sharedObjects.filter(
      (p) => p.includes("better-sqlite3") || p.includes("better_sqlite3"),
    );
    expect(loaded).toEqual([join(pkgDir, "prebuilds", `${process.platform}-${process.arch}.node`)]);
  });
});

describe("a copy that was never built", () => {
  it("the bin names the missing dist/ and the command that builds it, exit 2", () => {
    const dir = mkdtempSync(join(tmpdir(), "unbuilt-"));
    try {
      cpSync(join(root, "bin"), join(dir, "bin"), { recursive: true });
      cpSync(join(root, "package.json"), join(dir, "package.json"));
      const r = spawnSync(process.execPath, [join(dir, "bin/cline-otel.js"), "report"], { encoding: "utf8" });
      expect(r.status).toBe(2);
      expect(r.stderr.trim().split("\n")).toEqual([
        expect.stringMatching(/dist\/ is missing.*npm run build/),
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
