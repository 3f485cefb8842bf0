/**
 * Start-up: `--version`, `--help` and `paths` load no SDK, no exporter, no ledger and no price
 * catalog (checked by the modules a real process resolves: the bundle's chunks, each mapped back
 * to the src/ modules in it by its source map, and the dependencies left in node_modules), and
 * the bundled bin starts within a generous ratio of `node -e 0` (interleaved medians; the
 * benchmark's target is 2x).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { measureStartup, ROOT } from "../../bench/cases/startup.ts";
import { median } from "../../bench/lib/stats.ts";

const BIN = join(ROOT, "bin", "cline-otel.js");
const MAIN = join(ROOT, "dist", "cli", "main.js");
const HOOK = join(ROOT, "test", "bench", "support", "record-imports.mjs");
/** Margin over the benchmark's 2x: two shared cores. */
const MAX_BIN_OVER_NODE = 4;
/** Modules only a command that collects or exports needs (`paths` reads sessions.db: better-sqlite3). */
const HEAVY = [
  /@opentelemetry\//,
  /cline-llms-[\d.]+\.generated/,
  /\/src\/ledger\//,
  /\/src\/export\//,
  /\/src\/cost\//,
];
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

/**
 * What a resolved URL stands for: a file of the bundle in dist/ stands for the src/ modules its
 * source map names (absolute paths, e.g. `/…/src/cli/paths.ts`, or `/…/node_modules/commander/…`
 * for what was bundled); anything else (node:*, node_modules) for itself. A chunk without a map
 * fails the test (facades aside): the check must not pass by not seeing a module.
 */
function modulesOf(url: string): string[] {
  if (!url.startsWith("file:")) return [url];
  const file = fileURLToPath(url);
  if (!file.startsWith(join(ROOT, "dist", "/"))) return [url];
  if (!existsSync(`${file}.map`)) {
    // rolldown writes no map for a chunk of no module of its own: a facade re-exporting another
    // chunk (which the hook sees too). Anything else without a map is an error.
    const lines = readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "");
    expect(
      lines.filter((l) => !/^(import|export) /.test(l)),
      `${file} has no source map`,
    ).toEqual([]);
    return [];
  }
  const map = JSON.parse(readFileSync(`${file}.map`, "utf8")) as { sources: string[] };
  return map.sources.map((s) => resolve(dirname(file), s));
}

let runs = 0;
/** The modules a run of the CLI loads; `entry` main.js: the CLI without the bin's `--version` shortcut. */
function importsOf(args: string[], entry = BIN, env: Record<string, string> = {}, status = 0): string[] {
  const out = join(dir, `imports-${runs++}.txt`);
  const r = spawnSync(process.execPath, ["--import", HOOK, entry, ...args], {
    encoding: "utf8",
    env: {
      ...process.env,
      HOME: dir,
      XDG_STATE_HOME: join(dir, "state"),
      CLINE_OTEL_IMPORTS_OUT: out,
      ...env,
    },
  });
  expect(r.status, r.stderr).toBe(status);
  return readFileSync(out, "utf8").trim().split("\n").flatMap(modulesOf);
}

describe("start-up", () => {
  for (const args of [["--version"], ["--help"], ["paths", "--cline-dir", "/nonexistent/.cline"]]) {
    it(`\`${args.join(" ")}\` loads no SDK, exporter, ledger or price catalog`, () => {
      const urls = importsOf(args, MAIN);
      // The hook sees the CLI's own modules, so an empty list would prove nothing.
      expect(urls).toContain(join(ROOT, "src", "cli", "main.ts"));
      const heavy = args[0] === "paths" ? HEAVY : [...HEAVY, SQLITE];
      expect(urls.filter((u) => heavy.some((h) => h.test(u)))).toEqual([]);
    });
  }

  it("`paths` loads only its own command and no reader: no scanner, parser, compaction code or SQLite without an index", () => {
    const urls = importsOf(["paths", "--cline-dir", join(dir, "no-cline-here")]);
    const unneeded = [
      /\/src\/cli\/(report|run)\.ts$/,
      /\/src\/scan\/scanner\.ts$/,
      /\/src\/adapter\/cline\/(parser|adapter)\.ts$/,
      /\/compaction\/collect\.ts$/,
      /better-sqlite3/,
      // commander's executable-subcommand support, loaded lazily by the bundle (tools/build.js).
      /^node:(crypto|v8|child_process)$/,
    ];
    expect(urls).toContain(join(ROOT, "src", "cli", "paths.ts"));
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

  /** Packages a `run` loads only when its configuration uses them. */
  const OPTIONAL_EXPORT = {
    grpc: /\/node_modules\/(@grpc\/grpc-js|@opentelemetry\/exporter-[a-z]+-otlp-grpc)\//,
    json: /\/node_modules\/@opentelemetry\/exporter-(logs|trace)-otlp-http\//,
    prometheus: /\/node_modules\/@opentelemetry\/exporter-prometheus\//,
    logsAndTraces: /\/node_modules\/@opentelemetry\/(sdk-logs|sdk-trace|exporter-logs-|exporter-trace-)/,
  };
  // Connection refused at once: `run --once` ends with exit 1 (not delivered), having loaded its exporter.
  const refused = {
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9",
    OTEL_EXPORTER_OTLP_TIMEOUT: "1000",
    OTEL_METRIC_EXPORT_TIMEOUT: "1000",
  };
  // A function: `dir` is made in beforeAll, after this describe block has been collected.
  const runOnce = () => [
    "run",
    "--once",
    "--cline-dir",
    join(dir, "no-cline"),
    "--state-dir",
    join(dir, "st-run"),
  ];

  it("`run` over OTLP http/protobuf loads only that exporter: no gRPC, Prometheus, logs or traces code", () => {
    const urls = importsOf(
      runOnce(),
      BIN,
      { ...refused, OTEL_LOGS_EXPORTER: "none", OTEL_TRACES_EXPORTER: "none" },
      1,
    );
    expect(urls.some((u) => /\/node_modules\/@opentelemetry\/exporter-metrics-otlp-proto\//.test(u))).toBe(
      true,
    );
    expect(urls.filter((u) => Object.values(OPTIONAL_EXPORT).some((h) => h.test(u)))).toEqual([]);
  });

  it("`run` over OTLP/gRPC with logs and traces on does load them (the check above can fail)", () => {
    const urls = importsOf(
      runOnce(),
      BIN,
      {
        ...refused,
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
        OTEL_LOGS_EXPORTER: "otlp",
        OTEL_TRACES_EXPORTER: "otlp",
      },
      1,
    );
    expect(urls.some((u) => OPTIONAL_EXPORT.grpc.test(u))).toBe(true);
    expect(urls.some((u) => OPTIONAL_EXPORT.logsAndTraces.test(u))).toBe(true);
  });

  it("`report` does load the ledger (the check above can fail)", () => {
    const urls = importsOf(["report", "--cline-dir", join(dir, ".cline"), "--state-dir", join(dir, "st")]);
    expect(urls.some((u) => /\/src\/ledger\//.test(u))).toBe(true);
    expect(urls.some((u) => SQLITE.test(u))).toBe(true);
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
