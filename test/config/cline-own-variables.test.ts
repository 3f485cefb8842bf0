/**
 * Cline's own OpenTelemetry export reads `CLINE_OTEL_*` variables too (the VS Code extension 3.49+,
 * docs/backends.md "Cline's own OpenTelemetry export"). None of cline-otel's variables may be one of
 * them, or a user configuring one program would configure the other; and setting all of Cline's
 * changes nothing in cline-otel's configuration, so both can run from one environment.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/config/config.ts";
import { ROOT } from "../helpers/cli.ts";
import { CLINE_OTEL_VARIABLES } from "../helpers/cline-own-export.ts";

/**
 * The docs name Cline's variables on purpose where they explain Cline's own export: its section in
 * docs/backends.md, and any paragraph that links there (the README's). Those mentions are not ours.
 */
const CLINE_SECTION = /^## Cline's own OpenTelemetry export$[\s\S]*?(?=^## )/m;
const aboutCline = (text: string): string =>
  text
    .replace(CLINE_SECTION, "")
    .split(/\n\s*\n/)
    .filter((paragraph) => !paragraph.includes("#clines-own-opentelemetry-export"))
    .join("\n\n");

function files(dir: string, keep: (path: string) => boolean): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...files(path, keep));
    else if (keep(path)) out.push(path);
  }
  return out;
}

/** Every CLINE_OTEL_* name cline-otel reads or documents: src/, the docs, compose and collector files. */
function ourVariables(): Map<string, string> {
  const sources = [
    ...files(join(ROOT, "src"), (p) => p.endsWith(".ts")),
    ...files(join(ROOT, "docs"), (p) => /\.(md|service|plist|env|example)$/.test(p) || !p.includes(".")),
    join(ROOT, "README.md"),
    join(ROOT, "docker-compose.yml"),
    ...files(join(ROOT, "otel-collector"), (p) => /\.(ya?ml)$/.test(p)),
  ];
  const found = new Map<string, string>();
  for (const path of sources) {
    const text = aboutCline(readFileSync(path, "utf8"));
    for (const m of text.matchAll(/\bCLINE_OTEL_[A-Z0-9_]*[A-Z0-9]\b/g))
      if (!found.has(m[0])) found.set(m[0], relative(ROOT, path));
  }
  return found;
}

describe("cline-otel's CLINE_OTEL_* variables and Cline's", () => {
  it("none of ours is one of Cline's", () => {
    const ours = ourVariables();
    // The scan does find ours (a broken scan would find nothing and pass).
    for (const v of [
      "CLINE_OTEL_PROJECT",
      "CLINE_OTEL_HEADERS_FILE",
      "CLINE_OTEL_STATE_DIR",
      "CLINE_OTEL_USER",
    ])
      expect(ours.has(v), v).toBe(true);
    expect(ours.size).toBeGreaterThan(15);
    const clash = CLINE_OTEL_VARIABLES.filter((v) => ours.has(v)).map((v) => `${v} (${ours.get(v)})`);
    expect(clash).toEqual([]);
  });

  it("docs/backends.md names every one of Cline's variables as Cline's", () => {
    const section = CLINE_SECTION.exec(readFileSync(join(ROOT, "docs", "backends.md"), "utf8"))?.[0] ?? "";
    const row = section.split("\n").find((l) => l.startsWith("| the Cline extension's own export |")) ?? "";
    const named = new Set(row.match(/CLINE_OTEL_[A-Z0-9_]*[A-Z0-9]/g) ?? []);
    // `CLINE_OTEL_EXPORTER_OTLP_METRICS_PROTOCOL` / `_ENDPOINT` is written once: expand the short form.
    for (const m of row.matchAll(/`(CLINE_OTEL_[A-Z0-9_]+)_([A-Z]+)` \/ `_([A-Z]+)`/g))
      named.add(`${m[1]}_${m[3]}`);
    expect(CLINE_OTEL_VARIABLES.filter((v) => !named.has(v))).toEqual([]);
  });

  it("Cline's variables, all set, change nothing in cline-otel's configuration", () => {
    const base = {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318",
      CLINE_OTEL_STATE_DIR: "/tmp/cline-otel-state",
      CLINE_OTEL_USER: "alice",
    };
    const cline = Object.fromEntries(
      CLINE_OTEL_VARIABLES.map((v) => [
        v,
        v.endsWith("ENDPOINT")
          ? "https://cline-collector.example:4317"
          : v.endsWith("HEADERS")
            ? "x-secret=1"
            : "true",
      ]),
    );
    const without = resolveConfig({}, base, "/home/u", "/work");
    const withCline = resolveConfig({}, { ...base, ...cline }, "/home/u", "/work");
    expect(JSON.stringify(withCline)).toBe(JSON.stringify(without));
    // And the comparison can see a difference: one of our variables changes it.
    expect(
      JSON.stringify(resolveConfig({}, { ...base, CLINE_OTEL_PROJECT: "hash" }, "/home/u", "/work")),
    ).not.toBe(JSON.stringify(without));
  });
});
