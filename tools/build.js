// `npm run build` (also run by `npm ci` through "prepare", and by `npm pack`): compiles src/ into
// dist/ with tsc, then records the build in dist/.build-stamp. `npm start` (tools/start.js) rebuilds
// whenever a source is newer than that stamp, so a checkout never runs stale JavaScript after a
// `git pull` or an edit. Plain JavaScript: it runs before anything is compiled.
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const STAMP = join(ROOT, "dist", ".build-stamp");
/** Besides src/, what changes the build's output. */
const CONFIGS = ["tsconfig.json", "tsconfig.build.json"];

/** The newest mtime (ms) of a tree's files and directories (a deleted file changes its directory). */
function newestUnder(dir) {
  let newest = statSync(dir).mtimeMs;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestUnder(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/** Whether dist/ is missing or older than a source or a tsconfig. */
export function buildIsStale() {
  let built;
  try {
    built = statSync(STAMP).mtimeMs;
  } catch (e) {
    if (e.code === "ENOENT") return true;
    throw e;
  }
  const inputs = Math.max(
    newestUnder(join(ROOT, "src")),
    ...CONFIGS.map((f) => statSync(join(ROOT, f)).mtimeMs),
  );
  return inputs > built;
}

/** Runs tsc; the stamp is written only when it succeeded. Returns tsc's exit status. */
export function build() {
  let tsc;
  try {
    tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  } catch {
    // `npm ci --omit=dev` from a checkout: no compiler. Say what to do instead of a stack trace.
    process.stderr.write(
      "cline-otel: TypeScript is not installed (npm ci --omit=dev?), so dist/ cannot be built; run `npm ci` with dev dependencies.\n",
    );
    return 1;
  }
  const started = Date.now();
  const r = spawnSync(process.execPath, [tsc, "-p", join(ROOT, "tsconfig.build.json")], {
    cwd: ROOT,
    stdio: ["ignore", 2, 2],
  });
  const status = r.status ?? 1;
  if (status === 0) {
    mkdirSync(dirname(STAMP), { recursive: true });
    // The stamp's time is when the build started: a source saved during the build is newer.
    const at = new Date(started);
    writeFileSync(STAMP, `${at.toISOString()}\n`);
    utimesSync(STAMP, at, at);
  }
  return status;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = build();
}
