import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, type Managed, startManaged, waitFor } from "./processes.ts";

/** Debian bookworm's prometheus package: 2.42 (apt-get install prometheus). */
export const PROMETHEUS_BIN = process.env.PROMETHEUS_BIN ?? "/usr/bin/prometheus";
export const PROMTOOL_BIN = process.env.PROMTOOL_BIN ?? "/usr/bin/promtool";

export function requireBinary(path: string, aptPackage: string): void {
  if (!existsSync(path)) {
    throw new Error(
      `${path} is missing: apt-get install -y ${aptPackage} (or set the path in the environment)`,
    );
  }
}

export interface PromSample {
  readonly metric: Record<string, string>;
  readonly value: [number, string];
}

export interface RunningPrometheus {
  readonly url: string;
  readonly process: Managed;
  query(expr: string, time?: number): Promise<PromSample[]>;
  queryRange(
    expr: string,
    start: number,
    end: number,
    step: number,
  ): Promise<{ metric: Record<string, string> }[]>;
  /** What Grafana's `label_values(selector, label)` variable query asks for. */
  labelValues(label: string, selector: string): Promise<string[]>;
  /** /api/v1/rules: every loaded rule with its evaluation health. */
  rules(): Promise<{ name: string; health: string; lastError?: string; state?: string }[]>;
  stop(): Promise<void>;
}

export interface PrometheusOptions {
  /** Rule files to load: name -> YAML text, written beside the config (rules are evaluated every second). */
  readonly rules?: Readonly<Record<string, string>>;
}

/** A throwaway Prometheus on 127.0.0.1 scraping `targets` every second, TSDB in a temp dir. */
export async function startPrometheus(
  targets: readonly string[],
  opts: PrometheusOptions = {},
): Promise<RunningPrometheus> {
  requireBinary(PROMETHEUS_BIN, "prometheus");
  const dir = mkdtempSync(join(tmpdir(), "cline-otel-prom-"));
  const port = await freePort();
  const config = join(dir, "prometheus.yml");
  const ruleFiles = Object.entries(opts.rules ?? {});
  for (const [name, text] of ruleFiles) writeFileSync(join(dir, name), text);
  writeFileSync(
    config,
    [
      "global:",
      "  scrape_interval: 1s",
      "  scrape_timeout: 1s",
      "  evaluation_interval: 1s",
      ...(ruleFiles.length > 0
        ? ["rule_files:", ...ruleFiles.map(([name]) => `  - ${JSON.stringify(name)}`)]
        : []),
      "scrape_configs:",
      "  - job_name: cline-otel",
      "    static_configs:",
      `      - targets: [${targets.map((t) => JSON.stringify(t)).join(", ")}]`,
      "",
    ].join("\n"),
  );
  const proc = startManaged("prometheus", PROMETHEUS_BIN, [
    `--config.file=${config}`,
    `--storage.tsdb.path=${join(dir, "data")}`,
    `--web.listen-address=127.0.0.1:${port}`,
    "--log.level=warn",
  ]);
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await proc.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      "prometheus to be ready",
      async () => {
        if (proc.exited()) throw new Error(`prometheus exited:\n${proc.output()}`);
        const r = await fetch(`${url}/-/ready`);
        return r.ok ? true : undefined;
      },
      30_000,
    );
  } catch (e) {
    await stop();
    throw e;
  }
  const api = async (path: string, params: Record<string, string>) => {
    const r = await fetch(`${url}${path}?${new URLSearchParams(params)}`);
    const body = (await r.json()) as {
      status: string;
      error?: string;
      data?: { resultType: string; result: unknown };
    };
    if (body.status !== "success" || body.data === undefined) {
      throw new Error(
        `prometheus ${path} failed (${r.status}): ${body.error ?? "?"}\n  query: ${params.query}`,
      );
    }
    return body.data;
  };
  return {
    url,
    process: proc,
    async query(expr, time) {
      const data = await api("/api/v1/query", {
        query: expr,
        ...(time !== undefined ? { time: String(time) } : {}),
      });
      if (data.resultType === "scalar") {
        return [{ metric: {}, value: data.result as [number, string] }];
      }
      if (data.resultType !== "vector")
        throw new Error(`unexpected result type ${data.resultType} for ${expr}`);
      return data.result as PromSample[];
    },
    async queryRange(expr, start, end, step) {
      const data = await api("/api/v1/query_range", {
        query: expr,
        start: String(start),
        end: String(end),
        step: String(step),
      });
      return data.result as { metric: Record<string, string> }[];
    },
    async rules() {
      const r = await fetch(`${url}/api/v1/rules`);
      const body = (await r.json()) as {
        data: { groups: { rules: { name: string; health: string; lastError?: string; state?: string }[] }[] };
      };
      return body.data.groups.flatMap((g) => g.rules);
    },
    async labelValues(label, selector) {
      const data = await api(`/api/v1/label/${encodeURIComponent(label)}/values`, { "match[]": selector });
      return data as unknown as string[];
    },
    stop,
  };
}
