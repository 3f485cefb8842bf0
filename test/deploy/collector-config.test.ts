import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { REPO } from "./support/dashboard.ts";

/** The module list of the pinned distribution (copied from its manifest; the file names its source). */
const MANIFEST = JSON.parse(
  readFileSync(join(import.meta.dirname, "otelcol-contrib-0.159.0.components.json"), "utf8"),
) as Record<"extensions" | "receivers" | "processors" | "exporters" | "connectors", string[]> & {
  version: string;
};

type Kind = "extensions" | "receivers" | "processors" | "exporters" | "connectors";

/**
 * Component type (the key used in a collector config) -> the Go module implementing it. The type
 * names are each module's `metadata.yaml` `type:` at collector v0.159.0 (core) or contrib main (the
 * contrib ones have not changed name). In 0.159.0 the OTLP exporters are `otlp_grpc` / `otlp_http`;
 * `otlp` / `otlphttp` remain as deprecated aliases, so are not used here.
 */
const TYPES: Record<Kind, Record<string, string>> = {
  receivers: { otlp: "go.opentelemetry.io/collector/receiver/otlpreceiver" },
  processors: {
    batch: "go.opentelemetry.io/collector/processor/batchprocessor",
    memory_limiter: "go.opentelemetry.io/collector/processor/memorylimiterprocessor",
    transform: "github.com/open-telemetry/opentelemetry-collector-contrib/processor/transformprocessor",
    resource: "github.com/open-telemetry/opentelemetry-collector-contrib/processor/resourceprocessor",
    cumulativetodelta:
      "github.com/open-telemetry/opentelemetry-collector-contrib/processor/cumulativetodeltaprocessor",
  },
  exporters: {
    prometheus: "github.com/open-telemetry/opentelemetry-collector-contrib/exporter/prometheusexporter",
    prometheusremotewrite:
      "github.com/open-telemetry/opentelemetry-collector-contrib/exporter/prometheusremotewriteexporter",
    otlp_http: "go.opentelemetry.io/collector/exporter/otlphttpexporter",
    otlp_grpc: "go.opentelemetry.io/collector/exporter/otlpexporter",
    debug: "go.opentelemetry.io/collector/exporter/debugexporter",
  },
  extensions: {
    health_check: "github.com/open-telemetry/opentelemetry-collector-contrib/extension/healthcheckextension",
  },
  connectors: {},
};

type Config = Partial<Record<Kind, Record<string, unknown>>> & {
  service: {
    extensions?: string[];
    pipelines: Record<string, { receivers: string[]; processors?: string[]; exporters: string[] }>;
  };
};

const read = (name: string) => parse(readFileSync(join(REPO, "otel-collector", name), "utf8")) as Config;

/** The collector's merge of several --config files: maps merge key by key, anything else is replaced. */
function merge(a: unknown, b: unknown): unknown {
  if (a && b && typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b)) {
    const out: Record<string, unknown> = { ...(a as Record<string, unknown>) };
    for (const [k, v] of Object.entries(b)) out[k] = k in out ? merge(out[k], v) : v;
    return out;
  }
  return b;
}

const base = read("config.yaml");
const withHoneycomb = merge(base, read("honeycomb.yaml")) as Config;
const gateway = read("gateway.yaml");

function checkComponents(config: Config): void {
  for (const kind of ["receivers", "processors", "exporters", "extensions", "connectors"] as const) {
    for (const id of Object.keys(config[kind] ?? {})) {
      const type = id.split("/")[0] as string;
      const module = TYPES[kind][type];
      expect(module, `${kind}: ${id} has no known module`).toBeDefined();
      expect(
        MANIFEST[kind],
        `${kind}: ${id} (${module}) is not in otelcol-contrib ${MANIFEST.version}`,
      ).toContain(module);
    }
  }
}

function checkPipelines(config: Config): void {
  const defined = (kind: Kind) => new Set(Object.keys(config[kind] ?? {}));
  for (const [name, p] of Object.entries(config.service.pipelines)) {
    expect(["metrics", "logs", "traces"], name).toContain(name.split("/")[0]);
    for (const r of p.receivers) expect(defined("receivers"), `${name}: ${r}`).toContain(r);
    for (const x of p.processors ?? []) expect(defined("processors"), `${name}: ${x}`).toContain(x);
    for (const e of p.exporters) expect(defined("exporters"), `${name}: ${e}`).toContain(e);
    // memory_limiter first and batch last, as the collector recommends.
    const procs = p.processors ?? [];
    if (procs.includes("memory_limiter")) expect(procs[0], name).toBe("memory_limiter");
    if (procs.includes("batch")) expect(procs.at(-1), name).toBe("batch");
  }
  for (const x of config.service.extensions ?? []) expect(defined("extensions")).toContain(x);
}

describe("collector configuration (otel/opentelemetry-collector-contrib:0.159.0)", () => {
  it("pins the same release as docker-compose.yml", () => {
    expect(MANIFEST.version).toBe("0.159.0");
    const compose = readFileSync(join(REPO, "docker-compose.yml"), "utf8");
    expect(compose).toContain(`otel/opentelemetry-collector-contrib:${MANIFEST.version}`);
  });

  it("maps each known component type to a module of the pinned release", () => {
    for (const kind of Object.keys(TYPES) as Kind[]) {
      for (const [type, module] of Object.entries(TYPES[kind]))
        expect(MANIFEST[kind], `${kind}: ${type}`).toContain(module);
    }
  });

  it("names only components of the pinned contrib release", () => {
    checkComponents(base);
    checkComponents(withHoneycomb);
    checkComponents(gateway);
  });

  it("wires every pipeline to defined components", () => {
    checkPipelines(base);
    checkPipelines(withHoneycomb);
    checkPipelines(gateway);
  });

  it("receives OTLP on 4318 and 4317 and serves Prometheus text on 8889", () => {
    const otlp = base.receivers?.otlp as {
      protocols: { http: { endpoint: string }; grpc: { endpoint: string } };
    };
    expect(otlp.protocols.http.endpoint).toBe("0.0.0.0:4318");
    expect(otlp.protocols.grpc.endpoint).toBe("0.0.0.0:4317");
    const prom = base.exporters?.prometheus as Record<string, unknown>;
    expect(prom.endpoint).toBe("0.0.0.0:8889");
    // Explicit: from 0.154 the deprecated add_metric_suffixes is ignored by default.
    expect(prom.translation_strategy).toBe("UnderscoreEscapingWithSuffixes");
    expect(prom).not.toHaveProperty("add_metric_suffixes");
  });

  it("clears the unit of cline.* metrics before the Prometheus exporter only", () => {
    const main = base.service.pipelines.metrics;
    expect(main?.exporters).toEqual(["prometheus"]);
    const transform = base.processors?.["transform/prometheus_names"] as {
      metric_statements: { context: string; statements: string[] }[];
    };
    expect(main?.processors).toContain("transform/prometheus_names");
    expect(transform.metric_statements[0]?.context).toBe("metric");
    expect(transform.metric_statements[0]?.statements).toEqual([
      'set(metric.unit, "") where IsMatch(metric.name, "^(cline|gen_ai)[.]")',
    ]);
    // The regex really selects the contract's names and nothing else.
    const re = /^(cline|gen_ai)[.]/;
    for (const n of [
      "cline.token.usage",
      "cline.cost.usage",
      "cline.request.payload.size",
      "gen_ai.client.operation.duration",
    ])
      expect(re.test(n)).toBe(true);
    for (const n of ["otelcol_exporter_sent", "clinex.cost"]) expect(re.test(n)).toBe(false);
    const honeycomb = withHoneycomb.service.pipelines["metrics/honeycomb"];
    expect(honeycomb?.processors ?? []).not.toContain("transform/prometheus_names");
  });

  it("sends events to Loki and traces to Tempo, inside the compose network", () => {
    expect(base.service.pipelines.logs?.exporters).toEqual(["otlp_http/loki"]);
    expect(base.service.pipelines.traces?.exporters).toEqual(["otlp_grpc/tempo"]);
    expect((base.exporters?.["otlp_http/loki"] as { endpoint: string }).endpoint).toBe(
      "http://loki:3100/otlp",
    );
    expect((base.exporters?.["otlp_grpc/tempo"] as { endpoint: string }).endpoint).toBe("tempo:4317");
  });

  it("gateway: batch and retry on every pipeline, no resource detection, the dashboard's names", () => {
    expect(Object.keys(gateway.service.pipelines)).toEqual(["metrics", "logs", "traces"]);
    for (const [name, p] of Object.entries(gateway.service.pipelines)) {
      expect(p.processors?.[0], name).toBe("memory_limiter");
      expect(p.processors?.at(-1), name).toBe("batch");
      for (const e of p.exporters) {
        const retry = (gateway.exporters?.[e] as { retry_on_failure?: { enabled: boolean } })
          .retry_on_failure;
        expect(retry?.enabled, `${name}: ${e}`).toBe(true);
      }
    }
    // Resource detection would describe the gateway, not the developer's machine.
    expect(Object.keys(gateway.processors ?? {}).some((k) => k.startsWith("resourcedetection"))).toBe(false);
    expect(gateway.service.pipelines.metrics?.processors).toContain("transform/prometheus_names");
    expect(gateway.processors?.["transform/prometheus_names"]).toEqual(
      base.processors?.["transform/prometheus_names"],
    );
    // The compose profile mounts this very file.
    const compose = readFileSync(join(REPO, "docker-compose.yml"), "utf8");
    expect(compose).toContain("./otel-collector/gateway.yaml:/etc/otelcol-contrib/gateway.yaml:ro");
  });

  it("adds the Honeycomb pipelines (all three signals) only through the overlay, configured from the environment", () => {
    expect(Object.keys(base.service.pipelines)).toEqual(["metrics", "logs", "traces"]);
    expect(Object.keys(withHoneycomb.service.pipelines).sort()).toEqual([
      "logs",
      "logs/honeycomb",
      "metrics",
      "metrics/honeycomb",
      "traces",
      "traces/honeycomb",
    ]);
    // The overlay must not replace the base pipelines (lists are replaced on merge, maps are not).
    for (const name of ["metrics", "logs", "traces"])
      expect(withHoneycomb.service.pipelines[name]).toEqual(base.service.pipelines[name]);
    const events = withHoneycomb.exporters?.["otlp_http/honeycomb_events"] as {
      headers: Record<string, string>;
    };
    expect(events.headers["x-honeycomb-team"]).toBe(`\${env:HONEYCOMB_API_KEY}`);
    const hc = withHoneycomb.exporters?.["otlp_http/honeycomb"] as {
      endpoint: string;
      headers: Record<string, string>;
    };
    // The collector's own ${env:...} expansion, not JavaScript templates.
    const env = (name: string, fallback?: string) => `\${env:${name}${fallback ? `:-${fallback}` : ""}}`;
    expect(hc.endpoint).toBe(env("HONEYCOMB_ENDPOINT", "https://api.honeycomb.io"));
    expect(hc.headers["x-honeycomb-team"]).toBe(env("HONEYCOMB_API_KEY"));
    expect(hc.headers["x-honeycomb-dataset"]).toBe(env("HONEYCOMB_DATASET", "cline-otel"));
  });
});
