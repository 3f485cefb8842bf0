/**
 * One documented team setting (issue 28): `session.id` is on metric series by default, and a team's
 * shared backend turns it off with `OTEL_METRICS_INCLUDE_SESSION_ID=false`. The gateway example,
 * the compose file's team environment (beside its `gateway` profile), docs/backends.md's team
 * section and the series table of docs/metrics.md all show that very setting, the agents' settings
 * are the same in the three places that list them, and they resolve to what they claim.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { resolveConfig } from "../../src/config/config.ts";
import { ROOT } from "../helpers/cli.ts";

const read = (p: string) => readFileSync(join(ROOT, p), "utf8");
const TEAM = "OTEL_METRICS_INCLUDE_SESSION_ID=false";

/** `KEY=value` words of some lines (a shell block, or a YAML file's comments). */
function assignments(lines: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of lines) {
    for (const word of line.split(/\s+/)) {
      const m = /^([A-Z][A-Z0-9_]*)=(\S+)$/.exec(word);
      if (m) out[m[1] as string] = m[2] as string;
    }
  }
  return out;
}

/** The text of a markdown section: its lines up to the next heading of its level or above (fences skipped). */
function section(md: string, heading: string): string {
  const lines = md.split("\n");
  const start = lines.indexOf(heading);
  expect(start, heading).toBeGreaterThan(0);
  const level = /^#+/.exec(heading)?.[0].length ?? 2;
  const out: string[] = [];
  let fenced = false;
  for (const l of lines.slice(start + 1)) {
    if (l.startsWith("```")) fenced = !fenced;
    const h = /^(#+) /.exec(l);
    if (!fenced && h && (h[1] as string).length <= level) break;
    out.push(l);
  }
  return out.join("\n");
}

const composeTeam = (): Record<string, string> => {
  const doc = parse(read("docker-compose.yml")) as Record<string, unknown>;
  return doc["x-team-agent-environment"] as Record<string, string>;
};

const backendsTeam = (): Record<string, string> => {
  const s = section(read("docs/backends.md"), "## Many machines: a gateway collector");
  const block = /```sh\n([\s\S]*?)```/.exec(s)?.[1] ?? "";
  return assignments(block.split("\n").map((l) => l.replace(/#.*/, "")));
};

const gatewayTeam = (): Record<string, string> => {
  const head = read("otel-collector/gateway.yaml").split("\n");
  const from = head.findIndex((l) => l.includes("The agents' settings that go with it"));
  expect(from).toBeGreaterThanOrEqual(0);
  const lines: string[] = [];
  for (const l of head.slice(from + 1)) {
    if (!l.startsWith("#")) break;
    lines.push(l.slice(1));
  }
  return assignments(lines);
};

describe("the team setting", () => {
  it("is off the default: nothing set keeps session.id on metric series", () => {
    expect(resolveConfig({}, {}, "/home/u", "/cwd").export.includeSessionId).toBe(true);
  });

  it("is shown, with the same agent settings, by the gateway example, the compose file and backends.md", () => {
    const compose = composeTeam();
    const backends = backendsTeam();
    const gateway = gatewayTeam();
    expect(`OTEL_METRICS_INCLUDE_SESSION_ID=${compose.OTEL_METRICS_INCLUDE_SESSION_ID}`).toBe(TEAM);
    expect(backends).toEqual(compose);
    expect(gateway).toEqual(compose);
    // What the agents then run with: no session.id (nor project) on metric series, repository on.
    const cfg = resolveConfig({}, compose, "/home/u", "/cwd");
    expect(cfg.export.includeSessionId).toBe(false);
    expect(cfg.export.teams.metrics).toMatchObject({ sessionId: false, project: false, repository: true });
  });

  it("the compose file's gateway profile points at it", () => {
    const compose = read("docker-compose.yml");
    const gw = compose.slice(compose.indexOf("  # A team's gateway"), compose.indexOf("  otel-gateway:"));
    expect(gw).toContain("x-team-agent-environment");
    expect(gw).toContain(TEAM);
  });

  it("is the series table's reason in docs/metrics.md: 3,415 instead of 38,480 Prometheus series a week", () => {
    const s = section(read("docs/metrics.md"), "## Cardinality: what a shared backend holds");
    const rows = s.split("\n").filter((l) => l.startsWith("| "));
    const on = rows.find((l) => l.includes("38,480"));
    const off = rows.find((l) => l.includes("3,415"));
    expect(on).toContain("**defaults**");
    expect(off).toContain(`\`${TEAM}\``);
    expect(off).toContain("team setting");
    // The switch table says the same default.
    expect(rows.find((l) => l.startsWith("| `OTEL_METRICS_INCLUDE_SESSION_ID`"))).toContain("| `true` |");
  });
});
