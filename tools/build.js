// `npm run build` (also run by `npm run package` before `npm pack`, and by the Dockerfile; `npm ci` runs no
// install script at all, see .npmrc):
// bundles the CLI from src/ into dist/ with rolldown, then records the build in dist/.build-stamp.
// `npm start` (tools/start.js) and the test suite (test/helpers/build-once.ts) rebuild whenever an
// input is newer than that stamp, so a checkout never runs stale JavaScript after a `git pull` or an edit.
//
// Why a bundle: Node resolves, reads and compiles each ESM file on its own, and `paths` loaded 30
// of ours and commander's; bundled, it loads 8 (docs/performance.md, issue 15: 2.3x -> 1.8x
// `node -e 0`).
// Why from src/ and not from tsc's output: rolldown strips the types itself (oxc), so one step
// builds in well under a second and the source maps name src/*.ts directly, with no map chaining.
// tsc stays the type checker (`npm run typecheck`, run by `npm test`); the build does not type-check.
//
// Layout: dist/cli/main.js (the entry bin/cline-otel.js, the Dockerfile and docker-compose run),
// dist/chunks/*.js: one chunk per dynamic import (each command, and the lazily loaded SDK glue,
// ledger, scanner and price catalog), so `paths` and `--version` still load no SDK and no catalog.
// Dependencies stay in node_modules (external) except commander, which is small and always loaded:
// the SDK and gRPC are loaded only by commands that export, and better-sqlite3 is a native addon.
// No asset is read from a path next to a module: the price catalog and the scanner's wasm are
// compiled into TypeScript modules, src/cli/version.ts finds package.json by walking up, and the
// background reader's worker is an entry of its own next to the chunks (PROJECT below).
//
// Plain JavaScript: it runs before anything is compiled.
import { mkdirSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const ENTRY = join("cli", "main.js");
const STAMP_NAME = ".build-stamp";
/** Besides src/, what changes the build's output (this file holds the bundle's options). */
const CONFIGS = ["tsconfig.json", "package.json", join("tools", "build.js")];
/** Loaded from node_modules at run time, never bundled. */
export const EXTERNAL = [/^node:/, /^better-sqlite3(\/|$)/, /^@opentelemetry\//, /^@grpc\//];

/**
 * What is bundled (paths relative to the project root). Entries: output name -> module. Groups:
 * chunks for what is always loaded together, instead of the many small ones rolldown's default
 * splitting makes of them (each ESM file costs start-up time); each is the static import closure
 * of its roots, a module going to the first group that reaches it. Grouping changes which file
 * code is in, never what a command loads: dynamic imports stay out of a closure, and so does what
 * an entry other than the first statically loads. The first entry is the CLI.
 */
export const PROJECT = {
  entries: {
    "cli/main": "src/cli/main.ts",
    // The background reader's worker thread, found next to the chunk that starts it
    // (src/adapter/cline/background-reader.ts workerUrl): dist/chunks/document-worker.js.
    "chunks/document-worker": "src/adapter/cline/document-worker.ts",
  },
  groups: [
    // What the entry imports statically (commander, the CLI's common code, the config): every command.
    { name: "startup", roots: ["src/cli/main.ts"], withRoots: false },
    // Cline's discovery (the sessions walk, the index, the captures): `paths` and every collection pass.
    {
      name: "discovery",
      roots: [
        "src/adapter/cline/discover.ts",
        "src/adapter/cline/index-db.ts",
        "src/adapter/cline/captures/discover.ts",
      ],
      withRoots: true,
    },
  ],
};

/** The newest mtime (ms) of a tree's files and directories (a deleted file changes its directory). */
function newestUnder(dir) {
  let newest = statSync(dir).mtimeMs;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestUnder(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/** Whether `<root>/dist` is missing or older than a source or a config. */
export function buildIsStale(root = ROOT) {
  let built;
  try {
    built = statSync(join(root, "dist", STAMP_NAME)).mtimeMs;
  } catch (e) {
    if (e.code === "ENOENT") return true;
    throw e;
  }
  const inputs = Math.max(
    newestUnder(join(root, "src")),
    ...CONFIGS.map((f) => statSync(join(root, f)).mtimeMs),
  );
  return inputs > built;
}

/** The project's groups as rolldown chunk groups, and the plugin that computes their closures. A
 * root that is not in the build fails it: rename it in PROJECT when the module moves. */
function closureGroups(root, project) {
  const groups = project.groups.map((g) => ({ ...g, roots: g.roots.map((r) => resolve(root, r)) }));
  // The other entries (the document worker) load only what they import: what they reach stays
  // out of the groups, but what they share with a group goes in a "shared" group of its own
  // (rolldown puts a grouped module's imports in its group unless another group has them).
  const [, ...others] = Object.values(project.entries).map((m) => resolve(root, m));
  const groupOf = new Map();
  const named = [{ name: "shared" }, ...groups];
  return {
    groups: named.map((g, i) => ({
      name: g.name,
      priority: named.length - i,
      test: (id) => groupOf.get(id) === g.name,
    })),
    plugin: {
      name: "cline-otel:closure-groups",
      buildEnd(error) {
        if (error) return;
        /** The static import closure of `roots` (with them), or a thrown error naming a missing one. */
        const closure = (roots, what) => {
          const seen = new Set();
          const walk = (id) => {
            if (seen.has(id)) return;
            const info = this.getModuleInfo(id);
            if (info === null) throw new Error(`tools/build.js: ${id} (${what}) is not in the build`);
            seen.add(id);
            if (!info.isExternal) for (const next of info.importedIds) walk(next);
          };
          for (const r of roots) walk(r);
          return seen;
        };
        const elsewhere = closure(others, "an entry");
        for (const g of groups) {
          const members = closure(g.roots, `group ${g.name}`);
          if (!g.withRoots) for (const r of g.roots) members.delete(r);
          for (const id of members) {
            if (groupOf.has(id) || this.getModuleInfo(id)?.isExternal) continue;
            groupOf.set(id, elsewhere.has(id) ? "shared" : g.name);
          }
        }
      },
    },
  };
}

/**
 * commander imports node:child_process at the top of its Command module, for executable
 * subcommands (`git`-style `cline-otel-foo` binaries), which cline-otel has none of; with it Node
 * loads net, dgram and dns: ~4 ms of the ~30 ms `paths` may take beyond `node -e 0`. The bundle
 * loads it when (if ever) commander spawns one. The line is replaced as it stands (one line for
 * one, so the source map stays right); a commander that no longer has it fails the build.
 */
const COMMANDER_CHILD_PROCESS = "import childProcess from 'node:child_process';";
const lazyCommanderSpawn = {
  name: "cline-otel:lazy-commander-spawn",
  transform(code, id) {
    if (!/[\\/]node_modules[\\/]commander[\\/]lib[\\/]command\.js$/.test(id)) return null;
    if (!code.includes(COMMANDER_CHILD_PROCESS)) {
      throw new Error(`${id} no longer has \`${COMMANDER_CHILD_PROCESS}\`: update tools/build.js`);
    }
    const lazy =
      'const childProcess = { spawn: (...args) => process.getBuiltinModule("node:child_process").spawn(...args) };';
    return { code: code.replace(COMMANDER_CHILD_PROCESS, lazy), map: null };
  },
};

/** rolldown, or undefined when dev dependencies are not installed. */
async function loadRolldown(root) {
  try {
    // Resolved from the project, so a build of another root (tests) uses that root's rolldown.
    const { createRequire } = await import("node:module");
    const entry = createRequire(join(root, "package.json")).resolve("rolldown");
    return await import(pathToFileURL(entry).href);
  } catch (e) {
    if (e.code === "MODULE_NOT_FOUND" || e.code === "ERR_MODULE_NOT_FOUND") return undefined;
    throw e;
  }
}

/**
 * Bundles `project` (PROJECT: the CLI) from `<root>/src` into `<root>/<outDir>`; the stamp is written only when it
 * succeeded. The bundle is written to a fresh directory next to the old one and swapped in with
 * two renames, so a CLI started meanwhile (a test, `npm start` in another shell) never loads a
 * half-written dist/, and no file of an earlier build (a removed module, tsc's old per-file
 * output) survives. Returns an exit status: 0, or 1 after saying why on `stderr`.
 */
export async function build({
  root = ROOT,
  outDir = "dist",
  quiet = false,
  stderr = process.stderr,
  project = PROJECT,
} = {}) {
  const rolldown = await loadRolldown(root);
  if (rolldown === undefined) {
    // `npm ci --omit=dev` from a checkout: no bundler. Say what to do instead of a stack trace.
    stderr.write(
      "cline-otel: rolldown is not installed (npm ci --omit=dev?), so dist/ cannot be built; run `npm ci` with dev dependencies.\n",
    );
    return 1;
  }
  const started = Date.now();
  const final = resolve(root, outDir);
  const fresh = `${final}.new-${process.pid}`;
  const old = `${final}.old-${process.pid}`;
  rmSync(fresh, { recursive: true, force: true });
  const grouping = closureGroups(root, project);
  let bundle;
  try {
    bundle = await rolldown.rolldown({
      cwd: root,
      input: Object.fromEntries(Object.entries(project.entries).map(([name, m]) => [name, resolve(root, m)])),
      platform: "node",
      tsconfig: join(root, "tsconfig.json"),
      external: EXTERNAL,
      plugins: [grouping.plugin, lazyCommanderSpawn],
      logLevel: quiet ? "silent" : "warn",
    });
    await bundle.write({
      dir: fresh,
      format: "esm",
      entryFileNames: "[name].js",
      chunkFileNames: "chunks/[name]-[hash].js",
      codeSplitting: { groups: grouping.groups },
      // Maps name src/*.ts for stack traces (`node --enable-source-maps`); the sources themselves
      // are not copied in (the package ships dist/, the repository has src/).
      sourcemap: true,
      sourcemapExcludeSources: true,
    });
  } catch (e) {
    rmSync(fresh, { recursive: true, force: true });
    stderr.write(`cline-otel: the build failed: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  } finally {
    await bundle?.close();
  }
  // The stamp's time is when the build started: a source saved during the build is newer.
  const stamp = join(fresh, STAMP_NAME);
  const at = new Date(started);
  writeFileSync(stamp, `${at.toISOString()}\n`);
  utimesSync(stamp, at, at);
  mkdirSync(dirname(final), { recursive: true });
  let hadOld = true;
  try {
    renameSync(final, old);
  } catch (e) {
    if (e.code !== "ENOENT") throw e;
    hadOld = false;
  }
  renameSync(fresh, final);
  if (hadOld) rmSync(old, { recursive: true, force: true });
  if (!quiet) stderr.write(`cline-otel: built ${join(outDir, ENTRY)} in ${Date.now() - started} ms\n`);
  return 0;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await build();
}
