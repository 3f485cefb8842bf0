/**
 * A release made from a checkout (issue 28): it holds a built, working dist/, or it is refused.
 * On copies of this checkout WITHOUT dist/ (what a clone gives, with this checkout's node_modules),
 * under the repo's own .npmrc (ignore-scripts=true, issue 21):
 *   - `npm publish --dry-run` runs tools/prepack.js (package.json's publishConfig turns scripts on for
 *     the publish): it builds dist/ and the tarball it would publish holds it, and that dist/ runs;
 *   - with a source that does not build, the publish is refused, saying why;
 *   - a plain `npm pack` runs no script at all (npm's ignore-scripts: nothing can build or refuse
 *     there), so its tarball has no dist/ and its bin says so and what to run; `npm run package`
 *     is the pack that builds.
 * The registry is a closed local port: nothing leaves the machine (a dry run only reads the package).
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.ts";

/** What a clone holds that packing and building read (src/, bin/, tools/, the configs). */
const TRACKED = [
  "package.json",
  "package-lock.json",
  ".npmrc",
  "README.md",
  "tsconfig.json",
  "bin",
  "src",
  "tools",
];

let work = "";
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "cline-otel-release-"));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A copy of the checkout without dist/, its dependencies this checkout's. */
function checkout(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir);
  for (const f of TRACKED) cpSync(join(ROOT, f), join(dir, f), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  expect(existsSync(join(dir, "dist"))).toBe(false);
  return dir;
}

/** npm in `dir` with only the repo's .npmrc: an empty HOME and no npm_config_* of the caller. */
function npm(dir: string, args: string[]) {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k)) env[k] = v;
  return spawnSync("npm", args, {
    cwd: dir,
    encoding: "utf8",
    env: { ...env, HOME: join(work, "home"), NO_COLOR: "1" },
    timeout: 240_000,
  });
}

const PUBLISH = ["publish", "--dry-run", "--force", "--json", "--registry", "http://127.0.0.1:9/"];

/** The file list of `npm publish --json` (npm 11 keys it by package name; npm 10 prints it bare). */
function publishedFiles(stdout: string): string[] {
  const json = JSON.parse(stdout.slice(stdout.indexOf("{"))) as Record<string, unknown>;
  const info = ("files" in json ? json : Object.values(json)[0]) as { files: { path: string }[] };
  return info.files.map((f) => f.path);
}

function runBin(pkg: string, args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [join(pkg, "bin", "cline-otel.js"), ...args], {
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", OTEL_METRICS_EXPORTER: "none", ...env },
    timeout: 60_000,
  });
}

/** Unpacks a tarball inside `dir` (its imports then resolve to the copy's node_modules). */
function unpack(dir: string, tgz: string): string {
  const out = join(dir, "unpacked");
  mkdirSync(out);
  execFileSync("tar", ["-xzf", tgz, "-C", out]);
  return join(out, "package");
}

describe("a release from a checkout without dist/", () => {
  it("npm publish builds dist/ first: the tarball holds it, and it runs", () => {
    const dir = checkout("publish");
    const r = npm(dir, PUBLISH);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain("cline-otel prepack: dist/ is missing or older than a source; building it");
    const files = publishedFiles(r.stdout);
    expect(files).toContain("dist/cli/main.js");
    expect(files).toContain("dist/.build-stamp");
    expect(files.filter((f) => /^dist\/chunks\/.+\.js$/.test(f)).length).toBeGreaterThan(5);
    expect(files.filter((f) => /^(src|test|tools)\//.test(f))).toEqual([]);

    // The dist/ it built is what a pack of this copy now holds, and the packed CLI reports usage.
    const p = npm(dir, ["pack", "--json", "--pack-destination", dir]);
    expect(p.status, p.stderr).toBe(0);
    const tgz =
      (JSON.parse(p.stdout.slice(p.stdout.indexOf("["))) as { filename: string }[])[0]?.filename ?? "";
    const pkg = unpack(dir, join(dir, tgz));
    const home = join(dir, "fixture");
    cpSync(join(ROOT, "fixtures/cline/multi-tool/home"), home, { recursive: true });
    const report = runBin(pkg, ["report", "--json"], {
      HOME: home,
      CLINE_OTEL_STATE_DIR: join(dir, "state"),
    });
    expect(report.status, report.stderr).toBe(0);
    expect(JSON.parse(report.stdout).totals.events).toBeGreaterThan(0);
  }, 300_000);

  it("npm publish is refused, saying why, when dist/ cannot be built", () => {
    const dir = checkout("broken");
    writeFileSync(join(dir, "src", "cli", "main.ts"), "export const broken = ;\n");
    const r = npm(dir, PUBLISH);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(
      "cline-otel prepack: refusing to pack without a working dist/: the build failed",
    );
    expect(r.stdout).not.toContain('"dist/cli/main.js"');
  }, 300_000);

  it("a plain npm pack runs no script (ignore-scripts): its tarball has no dist/ and its bin says what to run", () => {
    const dir = checkout("pack");
    const p = npm(dir, ["pack", "--json", "--pack-destination", dir]);
    expect(p.status, p.stderr).toBe(0);
    expect(p.stderr).not.toContain("cline-otel prepack");
    const info = JSON.parse(p.stdout.slice(p.stdout.indexOf("["))) as {
      filename: string;
      files: { path: string }[];
    }[];
    expect(info[0]?.files.map((f) => f.path).filter((f) => f.startsWith("dist/"))).toEqual([]);
    const pkg = unpack(dir, join(dir, info[0]?.filename ?? ""));
    const r = runBin(pkg, ["report"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/dist\/ is missing \(this copy was never built\)/);
    expect(r.stderr).toContain("npm run package");
    // The package as npm would publish it says how scripts run for a publish.
    const manifest = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));
    expect(manifest.publishConfig).toEqual({ "ignore-scripts": false });
    expect(manifest.scripts.prepack).toBe("node tools/prepack.js");
  }, 300_000);
});
