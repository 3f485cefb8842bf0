/**
 * The published package: `npm pack` of the dist/ the suite's global setup built (`npm run package` builds
 * first; the repo runs no lifecycle script, see .npmrc), and the tarball's bin runs the
 * bundled CLI. The tarball is unpacked inside the repo so its imports resolve to this
 * checkout's node_modules, exactly as they would to an installed package's dependencies.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, reportJson } from "../helpers/cli.ts";

let unpack: string;
let work: string;
let files: string[];

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "pack-"));
  unpack = mkdtempSync(join(ROOT, ".pack-test-"));
  const out = execFileSync("npm", ["pack", "--json", "--pack-destination", work], {
    cwd: ROOT,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  const info = JSON.parse(out.slice(out.indexOf("["))) as { filename: string; files: { path: string }[] }[];
  files = (info[0]?.files ?? []).map((f) => f.path);
  execFileSync("tar", ["-xzf", join(work, info[0]?.filename ?? ""), "-C", unpack]);
}, 180_000);

afterAll(() => {
  rmSync(unpack, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

const bin = () => join(unpack, "package", "bin", "cline-otel.js");
function runBin(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, [bin(), ...args], {
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", OTEL_METRICS_EXPORTER: "none", ...env },
    timeout: 60_000,
  });
}

describe("the npm package", () => {
  it("ships the bundled CLI, the bin and the price catalog, and no sources, tests or fixtures", () => {
    expect(files).toContain("bin/cline-otel.js");
    expect(files).toContain("dist/cli/main.js");
    // The bundle (tools/build.js): the price catalog is compiled into a chunk, named by its map.
    const maps = files.filter((f) => /^dist\/chunks\/[^/]+\.js\.map$/.test(f));
    const sources = maps.flatMap(
      (f) => (JSON.parse(readFileSync(join(unpack, "package", f), "utf8")) as { sources: string[] }).sources,
    );
    expect(sources.some((s) => /\/src\/cost\/catalog\/[^/]+\.generated\.ts$/.test(s))).toBe(true);
    const other = files.filter((f) => f.startsWith("dist/") && !/\.js(\.map)?$/.test(f));
    expect(other).toEqual(["dist/.build-stamp"]);
    expect(files.filter((f) => /^(src|test|fixtures|bench)\//.test(f))).toEqual([]);
    const pkg = JSON.parse(readFileSync(join(unpack, "package", "package.json"), "utf8"));
    expect(pkg.bin).toEqual({ "cline-otel": "bin/cline-otel.js" });
  });

  it("its bin runs: --version, and a report equal to the checkout's", () => {
    const v = runBin(["--version"], {});
    expect(v.status, v.stderr).toBe(0);
    expect(v.stdout.trim()).toBe(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version);

    const home = join(work, "fixture");
    cpSync(join(ROOT, "fixtures/cline/multi-tool/home"), home, { recursive: true });
    const r = runBin(["report", "--json"], { HOME: home, CLINE_OTEL_STATE_DIR: join(work, "state-a") });
    expect(r.status, r.stderr).toBe(0);
    const fromSource = reportJson({ HOME: home, CLINE_OTEL_STATE_DIR: join(work, "state-b") });
    expect(JSON.parse(r.stdout).totals).toEqual(fromSource.totals);
    expect(fromSource.totals.events).toBeGreaterThan(0);
  });
});
