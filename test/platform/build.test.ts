/**
 * The build (tools/build.js) on a throw-away project: a chunk per dynamic import, stack traces
 * that name the src/*.ts line through the bin, a build that fails leaving the last good one in
 * place, no file of an earlier build surviving, and the staleness check `npm start` and the test
 * suite rely on.
 */
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, buildIsStale, PROJECT, ROOT } from "../../tools/build.js";

let root = "";
const MAIN = `const { boom } = await import("./boom.ts");
if (process.argv[2] === "boom") boom();
else process.stdout.write("ok\\n");
`;
const BOOM = `export function boom(): never {
  throw new Error("boom from the bundle");
}
`;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "cline-otel-build-"));
  for (const d of ["src/cli", "bin", "tools"]) mkdirSync(join(root, d), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"));
  for (const f of [
    "package.json",
    "tsconfig.json",
    "tools/build.js",
    "bin/cline-otel.js",
    "bin/check-node.js",
  ]) {
    copyFileSync(join(ROOT, f), join(root, f));
  }
  copyFileSync(join(ROOT, "bin", "source-maps.js"), join(root, "bin", "source-maps.js"));
  writeFileSync(join(root, "src/cli/main.ts"), MAIN);
  writeFileSync(join(root, "src/cli/boom.ts"), BOOM);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The throw-away project: its entry, and the real build's startup group (the entry's static imports). */
const project = {
  entries: { "cli/main": "src/cli/main.ts" },
  groups: PROJECT.groups.filter((g) => g.name === "startup"),
};

function runBin(...args: string[]) {
  return spawnSync(process.execPath, [join(root, "bin", "cline-otel.js"), ...args], { encoding: "utf8" });
}

describe("tools/build.js", () => {
  it("is stale before the first build, bundles with a chunk per dynamic import, and is then fresh", async () => {
    expect(buildIsStale(root)).toBe(true);
    expect(await build({ root, project, quiet: true })).toBe(0);
    expect(existsSync(join(root, "dist", "cli", "main.js"))).toBe(true);
    expect(readdirSync(join(root, "dist", "chunks")).filter((f) => /^boom-.*\.js$/.test(f))).toHaveLength(1);
    expect(buildIsStale(root)).toBe(false);
    expect(runBin().stdout).toBe("ok\n");
  });

  it("an unexpected error's stack names the src/*.ts line, through the bin (no --enable-source-maps)", () => {
    const r = runBin("boom");
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("Error: boom from the bundle");
    expect(r.stderr).toContain(`at boom (${join(root, "src", "cli", "boom.ts")}:2:9)`);
    // Node's own header above the stack quotes the bundle's line; the frames are mapped.
    const frames = r.stderr.split("\n").filter((l) => l.startsWith("    at "));
    expect(frames.length).toBeGreaterThan(0);
    expect(frames.filter((l) => l.includes("/dist/"))).toEqual([]);
  });

  it("a source, tsconfig.json, package.json or tools/build.js newer than the build makes it stale", () => {
    const later = new Date(Date.now() + 60_000);
    for (const f of ["src/cli/boom.ts", "tsconfig.json", "package.json", "tools/build.js"]) {
      expect(buildIsStale(root)).toBe(false);
      utimesSync(join(root, f), later, later);
      expect(buildIsStale(root), f).toBe(true);
      const back = new Date(Date.now() - 3_600_000);
      utimesSync(join(root, f), back, back);
    }
  });

  it("a failed build says which file, keeps the last good bundle and leaves nothing behind", async () => {
    writeFileSync(join(root, "src/cli/boom.ts"), "export function boom( {\n");
    const said: string[] = [];
    try {
      const status = await build({
        root,
        project,
        quiet: true,
        stderr: { write: (t: string) => said.push(t) },
      });
      expect(status).toBe(1);
    } finally {
      writeFileSync(join(root, "src/cli/boom.ts"), BOOM);
    }
    expect(said.join("")).toMatch(/build failed: .*src\/cli\/boom\.ts:1:\d+/s);
    expect(runBin().stdout).toBe("ok\n");
    expect(readdirSync(root).filter((f) => f.startsWith("dist."))).toEqual([]);
  });

  it("a group whose root is not in the build fails it, naming the module", async () => {
    const said: string[] = [];
    const moved = { ...project, groups: [{ name: "gone", roots: ["src/cli/moved.ts"], withRoots: true }] };
    const status = await build({
      root,
      project: moved,
      quiet: true,
      stderr: { write: (t: string) => said.push(t) },
    });
    expect(status).toBe(1);
    expect(said.join("")).toContain(join(root, "src", "cli", "moved.ts"));
    expect(runBin().stdout).toBe("ok\n");
  });

  it("a rebuild replaces dist/ whole: no file of an earlier build survives", async () => {
    writeFileSync(join(root, "dist", "chunks", "left-over.js"), "");
    expect(await build({ root, project, quiet: true })).toBe(0);
    expect(existsSync(join(root, "dist", "chunks", "left-over.js"))).toBe(false);
    expect(readdirSync(root).filter((f) => f.startsWith("dist."))).toEqual([]);
    expect(runBin("boom").stderr).toContain("boom.ts:2:9");
  });
});
