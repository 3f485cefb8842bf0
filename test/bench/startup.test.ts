/**
 * Start-up: `--version`, `--help` and `paths` load no SDK, no exporter, no ledger and no price
 * catalog (checked by the modules a real process resolves), and the compiled bin starts within
 * a generous ratio of `node -e 0` (interleaved medians; the benchmark's target is 2x).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { measureStartup, ROOT } from "../../bench/cases/startup.ts";
import { median } from "../../bench/lib/stats.ts";

const BIN = join(ROOT, "bin", "cline-otel.js");
const MAIN = join(ROOT, "dist", "cli", "main.js");
const HOOK = join(ROOT, "test", "bench", "support", "record-imports.mjs");
/** Margin over the benchmark's 2x: two shared cores. */
const MAX_BIN_OVER_NODE = 4;
/** Modules only a command that collects or exports needs (`paths` reads sessions.db: better-sqlite3). */
const HEAVY = [/@opentelemetry\//, /cline-llms-[\d.]+\.generated/, /\/ledger\//, /\/export\//, /\/cost\//];
const SQLITE = /better-sqlite3/;

let dir = "";
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "startup-"));
  // `npm ci` builds dist/ (the "prepare" script); a checkout without it cannot run the bin.
  if (!existsSync(join(ROOT, "dist", "cli", "main.js"))) {
    throw new Error("dist/ is not built: run `npm run build` (npm ci runs it through `prepare`)");
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let runs = 0;
/** The modules a run of the CLI resolves; `entry` main.js: the CLI without the bin's `--version` shortcut. */
function importsOf(args: string[], entry = BIN): string[] {
  const out = join(dir, `imports-${runs++}.txt`);
  const r = spawnSync(process.execPath, ["--import", HOOK, entry, ...args], {
    encoding: "utf8",
    env: { ...process.env, HOME: dir, XDG_STATE_HOME: join(dir, "state"), CLINE_OTEL_IMPORTS_OUT: out },
  });
  expect(r.status, r.stderr).toBe(0);
  return readFileSync(out, "utf8").trim().split("\n");
}

describe("start-up", () => {
  for (const args of [["--version"], ["--help"], ["paths", "--cline-dir", "/nonexistent/.cline"]]) {
    it(`\`${args.join(" ")}\` loads no SDK, exporter, ledger or price catalog`, () => {
      const urls = importsOf(args, MAIN);
      // The hook sees the CLI's own modules, so an empty list would prove nothing.
      expect(urls.some((u) => u.endsWith("/dist/cli/main.js"))).toBe(true);
      const heavy = args[0] === "paths" ? HEAVY : [...HEAVY, SQLITE];
      expect(urls.filter((u) => heavy.some((h) => h.test(u)))).toEqual([]);
    });
  }

  it("`paths` loads only its own command and no reader: no scanner, parser, compaction code or SQLite without an index", () => {
    const urls = importsOf(["paths", "--cline-dir", join(dir, "no-cline-here")]);
    const unneeded = [
      /\/dist\/cli\/(report|run)\.js$/,
      /\/dist\/scan\/scanner\.js$/,
      /\/dist\/adapter\/cline\/(parser|adapter)\.js$/,
      /\/compaction\/collect\.js$/,
      /better-sqlite3/,
      /^node:(crypto|v8)$/,
    ];
    expect(urls.some((u) => u.endsWith("/dist/cli/paths.js"))).toBe(true);
    expect(urls.filter((u) => unneeded.some((h) => h.test(u)))).toEqual([]);
  });

  it("the bin's fast `--version` says what the CLI itself says", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    const fast = spawnSync(process.execPath, [BIN, "--version"], { encoding: "utf8" });
    const full = spawnSync(process.execPath, [MAIN, "--version"], { encoding: "utf8" });
    expect(fast.status).toBe(0);
    expect(fast.stdout).toBe(`${pkg.version}\n`);
    expect(full.stdout).toBe(fast.stdout);
    expect(spawnSync(process.execPath, [BIN, "-V"], { encoding: "utf8" }).stdout).toBe(fast.stdout);
  });

  it("`report` does load the ledger (the check above can fail)", () => {
    const urls = importsOf(["report", "--cline-dir", join(dir, ".cline"), "--state-dir", join(dir, "st")]);
    expect(urls.some((u) => /\/ledger\//.test(u))).toBe(true);
  });

  it(`the installed bin's --version starts within ${MAX_BIN_OVER_NODE}x \`node -e 0\``, async () => {
    const m = await measureStartup(dir, 9, false);
    const ratio = median(m.binVersion) / median(m.nodeE0);
    console.log(
      `--version / node -e 0 = ${ratio.toFixed(2)} (${median(m.binVersion).toFixed(0)} ms vs ${median(m.nodeE0).toFixed(0)} ms; paths ${median(m.binPaths).toFixed(0)} ms; maximum ${MAX_BIN_OVER_NODE})`,
    );
    expect(ratio).toBeLessThanOrEqual(MAX_BIN_OVER_NODE);
  }, 60_000);
});
