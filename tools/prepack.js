// The release guard (issue 28): a tarball made from a checkout holds a built, working dist/ or is not
// made. npm runs `prepack` before it packs, when scripts run. This repo's .npmrc sets
// ignore-scripts=true (issue 21: no dependency install script), so a plain `npm pack` runs none (npm
// 10 and 11 alike; the tarball's bin then names the missing dist/); `npm publish` runs this one,
// because package.json's publishConfig sets ignore-scripts=false for the publish, and npm applies
// publishConfig to the pack inside a publish (not to `prepublishOnly`, read before it: so the guard
// is `prepack`). `npm run package` builds first, then packs.
// Builds dist/ when it is missing or older than a source, then starts the built CLI; exits 1 saying
// why when either fails, which makes npm refuse the pack and the publish.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { build, buildIsStale, ENTRY, ROOT } from "./build.js";

const refuse = (why) => {
  process.stderr.write(`cline-otel prepack: refusing to pack without a working dist/: ${why}\n`);
  process.exit(1);
};

if (buildIsStale()) {
  process.stderr.write(
    "cline-otel prepack: dist/ is missing or older than a source; building it (npm run build)...\n",
  );
  const status = await build();
  if (status !== 0) refuse("the build failed (above); fix it, then pack again");
}
if (!existsSync(join(ROOT, "dist", ENTRY))) refuse(`dist/${ENTRY} is missing after the build`);
// The packed bin runs this very dist/: a command's help loads the entry and a command's chunk.
const r = spawnSync(process.execPath, [join(ROOT, "bin", "cline-otel.js"), "paths", "--help"], {
  encoding: "utf8",
  timeout: 60_000,
});
if (r.status !== 0 || !r.stdout.includes("paths"))
  refuse(`the built CLI does not start (exit ${r.status}): ${(r.stderr || r.stdout).trim().slice(0, 500)}`);
