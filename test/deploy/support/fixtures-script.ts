import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { REPO } from "./dashboard.ts";

/**
 * The start script of docker-compose.yml's `cline-otel-fixtures` service, as its /bin/sh runs it,
 * with the container paths moved: /fixtures -> `fixtures`, /tmp/cline -> `clineDir`, and the final
 * `exec node dist/cli/main.js run` replaced by `echo started`.
 */
export function fixturesScript(fixtures: string, clineDir: string): string {
  const compose = parse(readFileSync(join(REPO, "docker-compose.yml"), "utf8")) as {
    services: Record<string, { command?: string[] }>;
  };
  const text = compose.services["cline-otel-fixtures"]?.command?.[0];
  if (text === undefined) throw new Error("docker-compose.yml has no cline-otel-fixtures command");
  return (
    text
      .replaceAll("$$", "$")
      // biome-ignore lint/suspicious/noTemplateCurlyInString: compose's own interpolation syntax
      .replaceAll("${CLINE_OTEL_FIXTURE:-*}", "*")
      .replaceAll("/fixtures/", "\u0000F/")
      .replaceAll("/tmp/cline", "\u0000C")
      .replaceAll("\u0000F", fixtures)
      .replaceAll("\u0000C", clineDir)
      .replace("exec node dist/cli/main.js run", "echo started")
  );
}

/** Run it; returns the shell's exit status and output. */
export function runFixturesScript(fixtures: string, clineDir: string) {
  return spawnSync("/bin/sh", ["-ec", fixturesScript(fixtures, clineDir)], { encoding: "utf8" });
}

/**
 * The `cline-otel-fixtures` service's own CLINE_OTEL_SERIES_TTL, so a test over the recorded
 * sessions keeps their series as the demo does, whatever today's date.
 */
export function fixturesSeriesTtl(): string {
  const compose = parse(readFileSync(join(REPO, "docker-compose.yml"), "utf8")) as {
    services: Record<string, { environment?: Record<string, string> }>;
  };
  const ttl = compose.services["cline-otel-fixtures"]?.environment?.CLINE_OTEL_SERIES_TTL;
  if (ttl === undefined)
    throw new Error("docker-compose.yml's cline-otel-fixtures sets no CLINE_OTEL_SERIES_TTL");
  return ttl;
}
