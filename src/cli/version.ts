import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The package version, found from this file both under src/ (tsx) and dist/ (built). Its own
 * module: every command's --version needs it, and none should load another command for it.
 */
export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const p = join(dir, "package.json");
    if (existsSync(p)) {
      const pkg = JSON.parse(readFileSync(p, "utf8")) as { name?: string; version?: string };
      if (pkg.name === "cline-otel" && typeof pkg.version === "string") return pkg.version;
    }
    dir = dirname(dir);
  }
  return "0.0.0";
}
