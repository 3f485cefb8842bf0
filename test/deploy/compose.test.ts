import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { REPO } from "./support/dashboard.ts";
import { runFixturesScript } from "./support/fixtures-script.ts";

/** Debian's docker-compose 1.29 (apt-get install docker-compose); `config` needs no Docker engine. */
const COMPOSE = process.env.DOCKER_COMPOSE ?? "docker-compose";
const HONEYCOMB_OVERRIDE = "otel-collector/compose.honeycomb.yml";

const scratch = mkdtempSync(join(tmpdir(), "cline-otel-compose-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Service {
  image?: string;
  build?: unknown;
  profiles?: string[];
  ports?: (string | { host_ip?: string; published?: number | string; target: number })[];
  environment?: Record<string, string | null>;
  volumes?: (string | { type: string; source: string; target: string; read_only?: boolean })[];
  command?: string[] | string;
  entrypoint?: string[];
  healthcheck?: { test: string[] };
  user?: string;
}
interface Compose {
  services: Record<string, Service>;
}

function compose(args: string[], env: Record<string, string | undefined> = {}) {
  const fullEnv: NodeJS.ProcessEnv = { ...process.env, CLINE_DIR: join(scratch, "dot-cline"), ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete fullEnv[k];
  // An isolated project dir would change relative paths; run from the repo, as a user does.
  const r = spawnSync(COMPOSE, ["-f", "docker-compose.yml", ...args], {
    cwd: REPO,
    env: fullEnv,
    encoding: "utf8",
  });
  if (r.error)
    throw new Error(`${COMPOSE} could not run (apt-get install -y docker-compose): ${r.error.message}`);
  return r;
}

function config(args: string[], env: Record<string, string | undefined> = {}): Compose {
  const r = compose([...args, "config"], env);
  expect(r.status, r.stderr).toBe(0);
  return parse(r.stdout) as Compose;
}

const source = parse(readFileSync(join(REPO, "docker-compose.yml"), "utf8")) as Compose;

describe("docker-compose.yml", () => {
  it("passes `docker-compose config` with the default services", () => {
    const c = config([], { HONEYCOMB_API_KEY: undefined });
    for (const s of ["cline-otel", "otel-collector", "prometheus", "grafana"])
      expect(Object.keys(c.services)).toContain(s);
    const env = c.services["cline-otel"]?.environment ?? {};
    expect(env.OTEL_EXPORTER_OTLP_ENDPOINT).toBe("http://otel-collector:4318");
    expect(env.OTEL_METRICS_EXPORTER).toBe("otlp");
    expect(env.CLINE_DIR).toBe("/cline");
  });

  it("passes with the fixtures profile, which reads the repo's fixtures read-only", () => {
    const c = config(["--profile", "fixtures"]);
    const f = c.services["cline-otel-fixtures"];
    expect(f?.profiles).toEqual(["fixtures"]);
    expect(f?.volumes?.some((v) => typeof v === "string" && /\/fixtures\/cline:\/fixtures:ro$/.test(v))).toBe(
      true,
    );
    expect(f?.environment?.OTEL_SERVICE_NAME).toBe("cline-otel-fixtures");
    // Recorded history never ages out of the demo: past the TTL its series would be sent once.
    expect(Number(f?.environment?.CLINE_OTEL_SERIES_TTL)).toBeGreaterThan(50 * 365 * 86_400);
  });

  it("passes with the Honeycomb override when HONEYCOMB_API_KEY is set, and refuses without it", () => {
    const c = config(["-f", HONEYCOMB_OVERRIDE], {
      HONEYCOMB_API_KEY: "test-key-not-real",
      HONEYCOMB_DATASET: "ds",
    });
    const col = c.services["otel-collector"];
    expect(col?.command).toEqual([
      "--config=/etc/otelcol-contrib/config.yaml",
      "--config=/etc/otelcol-contrib/honeycomb.yaml",
    ]);
    expect(col?.environment?.HONEYCOMB_API_KEY).toBe("test-key-not-real");
    expect(col?.environment?.HONEYCOMB_DATASET).toBe("ds");
    expect(c.services["cline-otel"]?.environment?.OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE).toBe(
      "delta",
    );
    // The override must not pull the fixtures service out of its profile.
    const withFixtures = config(["-f", HONEYCOMB_OVERRIDE, "--profile", "fixtures"], {
      HONEYCOMB_API_KEY: "k",
    });
    expect(withFixtures.services["cline-otel-fixtures"]?.profiles).toEqual(["fixtures"]);

    const refused = compose(["-f", HONEYCOMB_OVERRIDE, "config"], { HONEYCOMB_API_KEY: undefined });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain("HONEYCOMB_API_KEY");
  });

  it("passes with the gateway profile: the gateway collector, remote write into the demo Prometheus", () => {
    const c = config(["--profile", "gateway"]);
    const gw = c.services["otel-gateway"];
    expect(gw?.image).toBe("otel/opentelemetry-collector-contrib:0.159.0");
    expect(gw?.environment?.REMOTE_WRITE_URL).toBe("http://prometheus:9090/api/v1/write");
    expect(c.services.prometheus?.command).toContain("--web.enable-remote-write-receiver");
    // Not part of the default stack.
    expect(source.services["otel-gateway"]?.profiles).toEqual(["gateway"]);
  });

  it("binds every published port to 127.0.0.1", () => {
    const rendered = config(["--profile", "fixtures"]);
    for (const c of [source, rendered]) {
      for (const [name, s] of Object.entries(c.services)) {
        for (const p of s.ports ?? []) {
          const hostIp = typeof p === "string" ? p.split(":")[0] : p.host_ip;
          expect(hostIp, `${name}: ${JSON.stringify(p)}`).toBe("127.0.0.1");
        }
      }
    }
  });

  it("pins every image to an exact version", () => {
    for (const [name, s] of Object.entries(source.services)) {
      if (s.build !== undefined) {
        expect(s.image, name).toBe("cline-otel:local");
        continue;
      }
      expect(s.image, name).toMatch(/^[a-z0-9./-]+:v?\d+\.\d+\.\d+$/);
    }
    // The Dockerfile's base images too.
    const dockerfile = readFileSync(join(REPO, "Dockerfile"), "utf8");
    expect(dockerfile).toMatch(/^ARG NODE_VERSION=24\.\d+\.\d+$/m);
    expect(dockerfile.match(/^FROM /gm)?.length).toBe(2);
    // No compiler in either stage: better-sqlite3's prebuilt binary is the one that loads.
    expect(dockerfile).toMatch(/^FROM node:\$\{NODE_VERSION\}-bookworm-slim AS build$/m);
    expect(dockerfile).toMatch(/^FROM node:\$\{NODE_VERSION\}-bookworm-slim AS runtime$/m);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toContain('ENTRYPOINT ["node", "dist/cli/main.js"]');
    expect(dockerfile).toContain('CMD ["run"]');
  });

  it("mounts Cline's directory read-only and keeps the ledger on a named volume", () => {
    const s = config([]).services["cline-otel"];
    const bind = s?.volumes?.find((v) => typeof v === "object" && v.target === "/cline");
    expect(bind).toMatchObject({ type: "bind", target: "/cline", read_only: true });
    expect(typeof bind === "object" && bind.source).toBe(join(scratch, "dot-cline"));
    expect(s?.volumes).toContain("cline-otel-state:/var/lib/cline-otel:rw");
    expect(s?.environment?.CLINE_OTEL_STATE_DIR).toBe("/var/lib/cline-otel/state");
  });

  it("loads the alert rules and the budget into Prometheus; CLINE_OTEL_BUDGET_RULES swaps the budget", () => {
    const mounts = (env: Record<string, string | undefined>) =>
      (config([], env).services.prometheus?.volumes ?? []).map((v) => (typeof v === "string" ? v : ""));
    const dflt = mounts({ CLINE_OTEL_BUDGET_RULES: undefined });
    expect(dflt).toContain(
      `${join(REPO, "otel-collector/prometheus-rules.yml")}:/etc/prometheus/prometheus-rules.yml:ro`,
    );
    expect(dflt).toContain(
      `${join(REPO, "otel-collector/prometheus-budget.yml")}:/etc/prometheus/prometheus-budget.yml:ro`,
    );
    const mine = join(scratch, "my-budget.yml");
    expect(mounts({ CLINE_OTEL_BUDGET_RULES: mine })).toContain(
      `${mine}:/etc/prometheus/prometheus-budget.yml:ro`,
    );
  });

  it("health-checks the services whose images have a shell", () => {
    expect(source.services.prometheus?.healthcheck?.test.join(" ")).toContain("/-/ready");
    expect(source.services.grafana?.healthcheck?.test.join(" ")).toContain("/api/health");
  });

  it("provisions Grafana with the dashboard as the home page and anonymous viewers", () => {
    const env = config([]).services.grafana?.environment ?? {};
    expect(env.GF_AUTH_ANONYMOUS_ENABLED).toBe("true");
    expect(env.GF_AUTH_ANONYMOUS_ORG_ROLE).toBe("Viewer");
    expect(env.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH).toBe(
      "/etc/grafana/dashboards/cline-otel/cline-otel.json",
    );
    const provider = parse(
      readFileSync(join(REPO, "otel-collector/grafana/provisioning/dashboards/cline-otel.yaml"), "utf8"),
    ) as { providers: { options: { path: string } }[] };
    expect(provider.providers[0]?.options.path).toBe("/etc/grafana/dashboards/cline-otel");
    const ds = parse(
      readFileSync(join(REPO, "otel-collector/grafana/provisioning/datasources/prometheus.yaml"), "utf8"),
    ) as { datasources: { uid: string; url: string }[] };
    const dashboard = JSON.parse(
      readFileSync(join(REPO, "otel-collector/grafana/dashboards/cline-otel.json"), "utf8"),
    );
    const dsVar = dashboard.templating.list.find((v: { name: string }) => v.name === "datasource");
    expect(dsVar.current.value).toBe(ds.datasources[0]?.uid);
    expect(ds.datasources[0]?.url).toBe("http://prometheus:9090");
  });
});

describe("the fixtures service's start script", () => {
  it("merges every scenario's session directories and capture files, wherever they are, then starts cline-otel", () => {
    const fixtures = join(scratch, "fixtures");
    const target = join(scratch, "merged");
    const layouts: [string, string, string[]][] = [
      [
        "basic",
        "home/.cline/data/sessions",
        ["1796018194209_nfmy0.messages.json", "1796018194209_nfmy0.json"],
      ],
      [
        "subagents",
        "home/.cline/data/sessions",
        ["1796018200459_9svp0.messages.json", "agent_1_abcdef.messages.json"],
      ],
      // CLINE_SESSION_DATA_DIR scenarios keep sessions outside home/.cline.
      ["custom-session-dir", "custom-sessions", ["1796023899739_xyqjp.messages.json"]],
    ];
    for (const [scenario, sessionsDir, files] of layouts) {
      const id = (files[0] as string).split(".")[0] as string;
      const dir = join(fixtures, scenario, sessionsDir, id);
      mkdirSync(dir, { recursive: true });
      for (const f of files) writeFileSync(join(dir, f), `${scenario}/${f}\n`);
    }
    // No sessions at all: not counted as a scenario.
    mkdirSync(join(fixtures, "empty", "home/.cline/data/db"), { recursive: true });
    const captures = join(fixtures, "basic", "captures");
    mkdirSync(captures, { recursive: true });
    writeFileSync(join(captures, "cap_x.ai_sdk_prompt.1.provider-request.json"), "{}\n");
    const r = runFixturesScript(fixtures, target);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("started");
    expect(r.stderr).toContain("merged 3 fixture scenario(s)");
    const merged = join(target, "data/sessions");
    for (const [scenario, , files] of layouts) {
      const id = (files[0] as string).split(".")[0] as string;
      for (const f of files) expect(readFileSync(join(merged, id, f), "utf8")).toBe(`${scenario}/${f}\n`);
    }
    expect(readdirSync(merged).sort()).toEqual([
      "1796018194209_nfmy0",
      "1796018200459_9svp0",
      "1796023899739_xyqjp",
    ]);
    expect(readdirSync(join(target, "data/provider-request-captures"))).toEqual([
      "cap_x.ai_sdk_prompt.1.provider-request.json",
    ]);
  });

  it("skips a scenario's before/ copy (an older state of the same sessions, fixtures/harness/README.md)", () => {
    const fixtures = join(scratch, "fixtures-before");
    const target = join(scratch, "merged-before");
    const id = "1796116104318_5s9dz";
    for (const [tree, text] of [
      ["home/.cline/data/sessions", "final"],
      ["before/home/.cline/data/sessions", "before"],
    ] as const) {
      mkdirSync(join(fixtures, "compaction-agentic", tree, id), { recursive: true });
      writeFileSync(join(fixtures, "compaction-agentic", tree, id, `${id}.messages.json`), `${text}\n`);
    }
    mkdirSync(join(fixtures, "compaction-agentic", "before", "captures"), { recursive: true });
    writeFileSync(
      join(
        fixtures,
        "compaction-agentic",
        "before",
        "captures",
        "cap_b.ai_sdk_prompt.1.provider-request.json",
      ),
      "{}\n",
    );
    const r = runFixturesScript(fixtures, target);
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(join(target, "data/sessions", id, `${id}.messages.json`), "utf8")).toBe("final\n");
    expect(readdirSync(join(target, "data/provider-request-captures"))).toEqual([]);
  });

  it("fails loudly when the checkout has no fixtures", () => {
    const r = runFixturesScript(join(scratch, "none"), join(scratch, "merged-none"));
    expect(r.status).toBe(1);
    expect(r.stdout).not.toContain("started");
    expect(r.stderr).toContain("no Cline sessions under fixtures/cline/");
  });
});
