/**
 * A build of this tree's sources with one patch applied (bench/lib/*.patch: counting-off for the
 * delivered case's "before", storage-off for the cold report's floor): src, tools, bin and the
 * manifests copied into `dir` (the working tree, not HEAD), the patch applied with `git apply`,
 * bundled by its own tools/build.js against this tree's node_modules (the same lockfile). Returns
 * the build's bin. Also a command, for a base build to hand to a case:
 *
 *   npx tsx bench/lib/patched-build.ts /tmp/floor bench/lib/storage-off.patch
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, symlinkSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const ROOT = resolve(import.meta.dirname, "..", "..");

export function buildPatched(dir: string, patch: string): string {
  mkdirSync(dir, { recursive: true });
  for (const p of ["src", "tools", "bin", "package.json", "tsconfig.json"])
    cpSync(join(ROOT, p), join(dir, p), { recursive: true });
  if (!existsSync(join(dir, "node_modules")))
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  execFileSync("git", ["apply", resolve(patch)], { cwd: dir, stdio: "pipe" });
  execFileSync(process.execPath, [join("tools", "build.js")], { cwd: dir, stdio: "pipe" });
  return join(dir, "bin", "cline-otel.js");
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const [dir, patch] = process.argv.slice(2);
  if (dir === undefined || patch === undefined || existsSync(join(dir, "src"))) {
    console.error("usage: npx tsx bench/lib/patched-build.ts <new dir> <bench/lib/X.patch>");
    process.exit(2);
  }
  console.log(buildPatched(dir, patch));
}
