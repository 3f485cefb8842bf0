// `npm start -- <command>` from a checkout: runs the compiled CLI (bin/cline-otel.js, dist/), first
// rebuilding the bundle in dist/ when a source is newer than the last build (after a `git pull` or an edit), so
// the README's command is as fast as the installed one and never runs stale JavaScript.
import { build, buildIsStale } from "./build.js";

if (buildIsStale()) {
  process.stderr.write(
    "cline-otel: sources changed since the last build; building dist/ (npm run build)...\n",
  );
  const status = await build();
  if (status !== 0) {
    process.stderr.write("cline-otel: the build failed (above); fix it, or run `npm run build`.\n");
    process.exit(status);
  }
}
await import("../bin/cline-otel.js");
