/**
 * The source of dashboards/cline-otel.json (beside this file). Regenerate after a change:
 *   npx tsx otel-collector/grafana/generate-dashboard.ts
 * (test/deploy/dashboard-layout.test.ts fails while the JSON and this model differ). Every query
 * over a counter goes through `inc()`, the born-in-window idiom described in docs/backends.md, or
 * rate().
 */
/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: Grafana's ${...} variables, not JS templates */

type Json = Record<string, unknown>;
interface Pos {
  x: number;
  y: number;
  w: number;
  h: number;
}
interface TargetOpts {
  instant?: boolean;
  refId?: string;
  format?: string;
}
interface PanelOpts {
  decimals?: number;
  fill?: number;
  stack?: string;
  overrides?: Json[];
  rename?: Record<string, string>;
  sortBy?: string;
}

export function buildDashboard(): Json {
  const DS = { type: "prometheus", uid: "${datasource}" };
  const F =
    'session_id=~"$session", cline_agent=~"$agent", gen_ai_request_model=~"$model", gen_ai_provider_name=~"$provider", cline_project=~"$project"';

  const TOK = "cline_token_usage_total";
  const REQ = "cline_requests_total";
  const CALLS = "cline_tool_calls_total";
  const TTOK = "cline_tool_token_usage_total";
  const COST = "cline_cost_usage_total";
  const TCOST = "cline_tool_cost_usage_total";
  const COMP = "cline_compactions_total";
  const PAY = "cline_request_payload_size";
  const EST = "cline_request_estimated_tokens";
  const LOC = "cline_lines_of_code_total";
  const EDITS = "cline_code_edit_decisions_total";
  const ACTIVE = "cline_active_time_total";
  const COMMITS = "cline_commits_total";
  const PRS = "cline_pull_requests_total";

  // Only cline-otel's series (docs/metrics.md "Query convention"): other programs export cline_*
  // and gen_ai_* names too (Cline's own cline.tool.calls.total is our cline_tool_calls_total).
  const PRODUCER_LABEL = "cline_otel_producer";
  const PRODUCER = `${PRODUCER_LABEL}="cline-otel"`;
  function sel(metric: string, extra: string): string {
    return `${metric}{${PRODUCER}, ${extra ? `${extra}, ` : ""}${F}}`;
  }

  // Increase over the window W that also counts series BORN inside the window: a series that did
  // not exist at the window's start contributes everything it counted (it started from zero),
  // one that did contributes increase(). Plain increase() drops a series' first sample, and every
  // new session (session_id) or first start of cline-otel is such a series. The window's start is
  // matched ignoring the producer label and without selecting it: the series of a cline-otel from
  // before the label are the same series, not newly born ones counted with their whole history.
  function inc(metric: string, extra: string, W: string): string {
    const s = sel(metric, extra);
    const before = `ignoring (${PRODUCER_LABEL}) ${metric}{${extra ? `${extra}, ` : ""}${F}} offset ${W}`;
    return `(increase(${s}[${W}]) and ${before}) or (last_over_time(${s}[${W}]) unless ${before})`;
  }
  function sumBy(by: string, metric: string, extra: string, W: string): string {
    return `sum by (${by}) (${inc(metric, extra, W)})`;
  }
  function sumAll(metric: string, extra: string, W: string): string {
    return `sum(${inc(metric, extra, W)})`;
  }
  // Over a histogram's _count or _sum, which live as long as their _bucket series: plain increase().
  function increaseBy(by: string, metric: string, extra: string, W: string): string {
    return `sum by (${by}) (increase(${sel(metric, extra)}[${W}]))`;
  }
  function quantileBy(q: string, by: string, histogram: string, W: string): string {
    return `histogram_quantile(${q}, sum by (le, ${by}) (rate(${sel(`${histogram}_bucket`, "")}[${W}])))`;
  }
  const R = "$__range";
  const RI = "$__rate_interval";

  let nextId = 1;
  function target(expr: string, legend: string | undefined, opts: TargetOpts = {}): Json {
    const t: Json = {
      datasource: DS,
      editorMode: "code",
      expr,
      legendFormat: legend ?? "__auto",
      range: !opts.instant,
      instant: !!opts.instant,
      refId: opts.refId ?? "A",
    };
    if (opts.format) t.format = opts.format;
    return t;
  }
  /** An instant query read as a table (one row per series). */
  function tableTarget(expr: string): Json {
    return target(expr, "", { instant: true, format: "table" });
  }
  /** The range total of `metric` by one label, legend the label (bar gauges). */
  function totalsBy(label: string, metric: string): Json {
    return target(sumBy(label, metric, "", R), `{{${label}}}`, { instant: true });
  }
  function panel(
    type: string,
    title: string,
    description: string,
    gridPos: Pos,
    targets: Json[],
    extra: Json = {},
  ): Json {
    return { id: nextId++, type, title, description, datasource: DS, gridPos, targets, ...extra };
  }
  // Everything below the firing-alerts strip at the top.
  const TOP = 4;
  const g = (x: number, y: number, w: number, h: number): Pos => ({ x, y: y + TOP, w, h });

  function stat(
    title: string,
    description: string,
    pos: Pos,
    expr: string,
    unit: string,
    extra: PanelOpts = {},
  ): Json {
    return panel("stat", title, description, pos, [target(expr, title, { instant: true })], {
      fieldConfig: {
        defaults: {
          unit,
          decimals: extra.decimals,
          color: { mode: "thresholds" },
          thresholds: { mode: "absolute", steps: [{ color: "blue", value: null }] },
        },
        overrides: [],
      },
      options: {
        reduceOptions: { calcs: ["lastNotNull"], fields: "", values: false },
        colorMode: "value",
        graphMode: "none",
        justifyMode: "auto",
        textMode: "value",
        orientation: "auto",
      },
    });
  }
  function bars(
    title: string,
    description: string,
    pos: Pos,
    targets: Json[],
    unit: string,
    extra: PanelOpts = {},
  ): Json {
    return panel("bargauge", title, description, pos, targets, {
      fieldConfig: {
        defaults: {
          unit,
          decimals: extra.decimals,
          min: 0,
          color: { mode: "palette-classic" },
          thresholds: { mode: "absolute", steps: [{ color: "green", value: null }] },
        },
        overrides: [],
      },
      options: {
        displayMode: "gradient",
        orientation: "horizontal",
        showUnfilled: true,
        valueMode: "color",
        namePlacement: "auto",
        sizing: "auto",
        minVizHeight: 16,
        maxVizHeight: 300,
        reduceOptions: { calcs: ["lastNotNull"], fields: "", values: false },
      },
    });
  }
  function series(
    title: string,
    description: string,
    pos: Pos,
    targets: Json[],
    unit: string,
    extra: PanelOpts = {},
  ): Json {
    return panel("timeseries", title, description, pos, targets, {
      fieldConfig: {
        defaults: {
          unit,
          color: { mode: "palette-classic" },
          custom: {
            drawStyle: "line",
            lineWidth: 1,
            fillOpacity: extra.fill ?? 20,
            stacking: { mode: extra.stack ?? "none", group: "A" },
            showPoints: "never",
            spanNulls: false,
            axisSoftMin: 0,
          },
        },
        overrides: extra.overrides ?? [],
      },
      options: timeseriesOptions(),
    });
  }
  function timeseriesOptions(): Json {
    return {
      legend: {
        displayMode: "table",
        placement: "bottom",
        calcs: ["lastNotNull", "max"],
        showLegend: true,
      },
      tooltip: { mode: "multi", sort: "desc" },
    };
  }
  function table(
    title: string,
    description: string,
    pos: Pos,
    targets: Json[],
    unit: string,
    extra: PanelOpts = {},
  ): Json {
    return panel("table", title, description, pos, targets, {
      fieldConfig: {
        defaults: { unit, custom: { align: "auto", cellOptions: { type: "auto" } } },
        overrides: extra.overrides ?? [],
      },
      options: {
        showHeader: true,
        cellHeight: "sm",
        sortBy: [{ displayName: extra.sortBy ?? "Value", desc: true }],
        footer: { show: false, reducer: ["sum"], fields: "" },
      },
      transformations: [
        { id: "organize", options: { excludeByName: { Time: true }, renameByName: extra.rename ?? {} } },
      ],
    });
  }

  /** Per-session panels: a team's shared backend leaves session.id off metric series (docs/metrics.md "Cardinality"). */
  const NEEDS_SESSION_ID =
    "Needs session.id on cline-otel's metric series (the default; a team's shared backend turns it off with OTEL_METRICS_INCLUDE_SESSION_ID=false): without it there is no session_id and this panel shows nothing per session.";
  const RANGE_NOTE =
    "Totals over the dashboard time range. Series first seen inside the range count in full (a new session, or cline-otel's first start over older Cline history).";
  const RATE_NOTE =
    "Tokens counted in the trailing $__rate_interval at each point (Grafana widens it with the zoom level); new series count in full when they first appear.";

  const panels: Json[] = [];
  // ---- Firing alerts (the strip above everything)
  panels.push(
    panel(
      "table",
      "Firing alerts",
      "Alerts of otel-collector/prometheus-rules.yml firing now (docs/alerts.md), from Prometheus' ALERTS series; all of Prometheus' alerts, whatever the variables above. Empty when nothing fires, or when the Prometheus behind this data source has no cline-otel rules loaded. Details and annotations: Prometheus' Alerts page (http://127.0.0.1:9090/alerts in the demo).",
      { x: 0, y: 0, w: 24, h: TOP },
      [
        target(
          'count by (alertname, severity, instance, session_id, gen_ai_request_model, gen_ai_provider_name) (ALERTS{alertstate="firing", alertname=~"Cline.*"})',
          "",
          { instant: true, format: "table" },
        ),
      ],
      {
        fieldConfig: {
          defaults: {
            noValue: "No cline-otel alert is firing",
            custom: { align: "auto", cellOptions: { type: "auto" } },
          },
          overrides: [
            {
              matcher: { id: "byName", options: "Severity" },
              properties: [
                { id: "custom.cellOptions", value: { type: "color-background" } },
                {
                  id: "mappings",
                  value: [
                    {
                      type: "value",
                      options: {
                        critical: { color: "red", index: 0 },
                        warning: { color: "orange", index: 1 },
                        info: { color: "blue", index: 2 },
                      },
                    },
                  ],
                },
              ],
            },
          ],
        },
        options: {
          showHeader: true,
          cellHeight: "sm",
          footer: { show: false, reducer: ["sum"], fields: "" },
        },
        transformations: [
          {
            id: "organize",
            options: {
              excludeByName: { Time: true, Value: true },
              renameByName: {
                alertname: "Alert",
                severity: "Severity",
                instance: "cline-otel",
                session_id: "Session",
                gen_ai_request_model: "Model",
                gen_ai_provider_name: "Provider",
              },
            },
          },
        ],
        links: [{ title: "Prometheus alerts page (the demo stack)", url: "http://127.0.0.1:9090/alerts" }],
      },
    ),
  );
  // ---- Overview (y 0-8)
  panels.push(
    bars(
      "Tokens by type",
      `${RANGE_NOTE} input is the uncached part of the prompt; the four types sum to Cline's stored totals.`,
      g(0, 0, 8, 8),
      [totalsBy("type", TOK)],
      "short",
    ),
  );
  panels.push(
    stat(
      "Cache hit ratio",
      "cache_read / (input + cache_read + cache_write) over the range: the share of prompt tokens served from the provider's cache.",
      g(8, 0, 4, 4),
      `(${sumAll(TOK, 'type="cache_read"', R)} or vector(0)) / ${sumAll(TOK, 'type=~"input|cache_read|cache_write"', R)}`,
      "percentunit",
      { decimals: 1 },
    ),
  );
  panels.push(
    stat(
      "Requests",
      `Model responses with usage (one per assistant message with metrics). ${RANGE_NOTE}`,
      g(12, 0, 4, 4),
      sumAll(REQ, "", R),
      "short",
    ),
  );
  panels.push(
    stat(
      "Cost",
      `Computed by cline-otel from its price table (USD). ${RANGE_NOTE}`,
      g(16, 0, 4, 4),
      sumAll(COST, "", R),
      "currencyUSD",
      { decimals: 2 },
    ),
  );
  panels.push(
    stat(
      "Sub-agent share",
      "Share of all tokens spent by sub-agents and teammates (cline_agent != lead) over the range.",
      g(20, 0, 4, 4),
      `(${sumAll(TOK, 'cline_agent!="lead"', R)} or vector(0)) / ${sumAll(TOK, "", R)}`,
      "percentunit",
      { decimals: 1 },
    ),
  );
  panels.push(
    stat(
      "Tool calls",
      `tool_use blocks in model responses, counted once final: their tool_result read, or their document quiet (CLINE_OTEL_QUIET_TIME, outcome unknown). ${RANGE_NOTE}`,
      g(8, 4, 4, 4),
      sumAll(CALLS, "", R),
      "short",
    ),
  );
  panels.push(
    stat(
      "Sessions",
      `Sessions (session_id) with usage in the range. ${NEEDS_SESSION_ID}`,
      g(12, 4, 4, 4),
      `count(${sumBy("session_id", REQ, 'session_id!=""', R)}) or vector(0)`,
      "short",
    ),
  );
  panels.push(
    stat(
      "Tokens per request",
      "All four token types divided by requests, over the range.",
      g(16, 4, 4, 4),
      `${sumAll(TOK, "", R)} / ${sumAll(REQ, "", R)}`,
      "short",
      { decimals: 0 },
    ),
  );
  panels.push(
    stat(
      "Tool calls with unknown cost",
      "Calls in a message that carried no usage metrics (cline_usage_known=false): observed, but their tokens and cost are unknown, not zero.",
      g(20, 4, 4, 4),
      `${sumAll(CALLS, 'cline_usage_known="false"', R)} or vector(0)`,
      "short",
    ),
  );

  // ---- Over time (y 8-16)
  panels.push(
    series(
      "Tokens by type over time",
      RATE_NOTE,
      g(0, 8, 12, 8),
      [target(sumBy("type", TOK, "", RI), "{{type}}")],
      "short",
      { stack: "normal" },
    ),
  );
  panels.push(
    series(
      "Input vs cache read vs cache write",
      `Prompt tokens by where they came from, with the cache hit ratio (right axis). ${RATE_NOTE}`,
      g(12, 8, 12, 8),
      [
        target(sumBy("type", TOK, 'type=~"input|cache_read|cache_write"', RI), "{{type}}"),
        target(
          `${sumAll(TOK, 'type="cache_read"', RI)} / ${sumAll(TOK, 'type=~"input|cache_read|cache_write"', RI)}`,
          "cache hit ratio",
          { refId: "B" },
        ),
      ],
      "short",
      {
        overrides: [
          {
            matcher: { id: "byFrameRefID", options: "B" },
            properties: [
              { id: "unit", value: "percentunit" },
              { id: "custom.axisPlacement", value: "right" },
              { id: "custom.fillOpacity", value: 0 },
              { id: "custom.lineWidth", value: 2 },
              { id: "max", value: 1 },
            ],
          },
        ],
      },
    ),
  );

  // ---- Models and providers (y 16-24)
  panels.push(
    series(
      "Requests by model",
      RATE_NOTE.replace("Tokens", "Requests"),
      g(0, 16, 12, 8),
      [
        target(
          sumBy("gen_ai_request_model, gen_ai_provider_name", REQ, "", RI),
          "{{gen_ai_request_model}} ({{gen_ai_provider_name}})",
        ),
      ],
      "short",
    ),
  );
  panels.push(
    table(
      "Tokens by model and provider",
      RANGE_NOTE,
      g(12, 16, 12, 8),
      [tableTarget(sumBy("gen_ai_request_model, gen_ai_provider_name, type", TOK, "", R))],
      "short",
      {
        rename: {
          gen_ai_request_model: "Model",
          gen_ai_provider_name: "Provider",
          type: "Type",
          Value: "Tokens",
        },
        sortBy: "Tokens",
      },
    ),
  );

  // ---- Projects and sessions (y 24-32)
  panels.push(
    bars(
      "Top projects by tokens",
      `The 10 projects (session cwd, see CLINE_OTEL_PROJECT) with the most tokens. ${RANGE_NOTE}`,
      g(0, 24, 12, 8),
      [target(`topk(10, ${sumBy("cline_project", TOK, "", R)})`, "{{cline_project}}", { instant: true })],
      "short",
    ),
  );
  panels.push(
    table(
      "Top sessions by tokens",
      `The 15 sessions with the most tokens; click a session to drill down. ${NEEDS_SESSION_ID} ${RANGE_NOTE}`,
      g(12, 24, 12, 8),
      [tableTarget(`topk(15, ${sumBy("session_id, cline_project", TOK, "", R)})`)],
      "short",
      {
        rename: { session_id: "Session", cline_project: "Project", Value: "Tokens" },
        sortBy: "Tokens",
        overrides: [
          {
            matcher: { id: "byName", options: "Session" },
            properties: [
              {
                id: "links",
                value: [
                  {
                    title: "Drill down to this session",
                    url: "/d/${__dashboard.uid}?${__url_time_range}&${datasource:queryparam}&var-session=${__value.raw}",
                  },
                ],
              },
            ],
          },
        ],
      },
    ),
  );

  // ---- Agents (y 32-40)
  panels.push(
    series(
      "Sub-agent share over time",
      "Share of tokens spent by sub-agents and teammates (cline_agent != lead) in the trailing $__rate_interval.",
      g(0, 32, 12, 8),
      [target(`${sumAll(TOK, 'cline_agent!="lead"', RI)} / ${sumAll(TOK, "", RI)}`, "sub-agent share")],
      "percentunit",
      { fill: 10 },
    ),
  );
  panels.push(
    bars(
      "Tokens by agent",
      `lead = the top-level conversation; subagent = spawn_agent; teammate = agent teams. ${RANGE_NOTE}`,
      g(12, 32, 12, 8),
      [totalsBy("cline_agent", TOK)],
      "short",
    ),
  );

  // ---- Tools (y 40-48)
  panels.push(
    bars("Tool calls by tool", RANGE_NOTE, g(0, 40, 8, 8), [totalsBy("gen_ai_tool_name", CALLS)], "short"),
  );
  panels.push(
    bars(
      "Tool token share",
      `Each call carries 1/n of the tokens of the model response that made it (n = tool calls in that response): the fractional share of tokens behind each tool. ${RANGE_NOTE}`,
      g(8, 40, 8, 8),
      [totalsBy("gen_ai_tool_name", TTOK)],
      "short",
    ),
  );
  panels.push(
    series(
      "Tool calls over time",
      RATE_NOTE.replace("Tokens", "Tool calls"),
      g(16, 40, 8, 8),
      [target(sumBy("gen_ai_tool_name", CALLS, "", RI), "{{gen_ai_tool_name}}")],
      "short",
      { stack: "normal" },
    ),
  );

  // ---- Cost (y 48-64)
  panels.push(
    bars(
      "Cost by model",
      RANGE_NOTE,
      g(0, 48, 8, 8),
      [totalsBy("gen_ai_request_model", COST)],
      "currencyUSD",
      { decimals: 2 },
    ),
  );
  panels.push(
    bars(
      "Cost by project",
      RANGE_NOTE,
      g(8, 48, 8, 8),
      [target(`topk(10, ${sumBy("cline_project", COST, "", R)})`, "{{cline_project}}", { instant: true })],
      "currencyUSD",
      { decimals: 2 },
    ),
  );
  panels.push(
    bars(
      "Cost by tool",
      `Each call's fractional share of its response's cost. ${RANGE_NOTE}`,
      g(16, 48, 8, 8),
      [totalsBy("gen_ai_tool_name", TCOST)],
      "currencyUSD",
      { decimals: 2 },
    ),
  );
  panels.push(
    table(
      "Cost per session",
      `${NEEDS_SESSION_ID} ${RANGE_NOTE}`,
      g(0, 56, 12, 8),
      [tableTarget(`topk(25, ${sumBy("session_id, cline_project, gen_ai_request_model", COST, "", R)})`)],
      "currencyUSD",
      {
        rename: {
          session_id: "Session",
          cline_project: "Project",
          gen_ai_request_model: "Model",
          Value: "Cost",
        },
        sortBy: "Cost",
      },
    ),
  );
  panels.push(
    series(
      "Cost over time by model",
      "USD spent in the trailing $__rate_interval; new series count in full when they first appear.",
      g(12, 56, 12, 8),
      [target(sumBy("gen_ai_request_model", COST, "", RI), "{{gen_ai_request_model}}")],
      "currencyUSD",
      { stack: "normal" },
    ),
  );

  // ---- Runaway sessions and compactions (y 64-72)
  panels.push(
    panel(
      "timeseries",
      "Busiest sessions (requests per second)",
      "The 5 sessions with the highest model-request rate at each point. Needs session.id on the metric series (the default; not with the team setting OTEL_METRICS_INCLUDE_SESSION_ID=false); without it the lines are per project. A session far above its own normal is what the ClineRunawaySession alert looks for (over 0.5/s and 4 times its median, or over 2/s: the red line is 0.5/s). Seen with the real Cline CLI: a repeating basic compaction looping at 3.3 requests/s.",
      g(0, 64, 12, 8),
      [
        target(
          `topk(5, sum by (session_id, cline_project) (rate(${sel(REQ, "")}[${RI}])))`,
          "{{session_id}} {{cline_project}}",
        ),
      ],
      {
        fieldConfig: {
          defaults: {
            unit: "reqps",
            color: { mode: "palette-classic" },
            thresholds: {
              mode: "absolute",
              steps: [
                { color: "green", value: null },
                { color: "red", value: 0.5 },
              ],
            },
            custom: {
              drawStyle: "line",
              lineWidth: 1,
              fillOpacity: 0,
              showPoints: "never",
              spanNulls: false,
              axisSoftMin: 0,
              thresholdsStyle: { mode: "line" },
            },
          },
          overrides: [],
        },
        options: timeseriesOptions(),
      },
    ),
  );
  panels.push(
    series(
      "Compactions by strategy",
      `Context compactions Cline made (cline.compactions), in the trailing $__rate_interval: agentic (a summarizer model call, whose tokens Cline does not record) or basic (older turns dropped), by the reason Cline records. Each observed compaction counts once; two between two reads of the session count as one. A steady stream of basic compactions in one session, with a request spike above, is the runaway loop.`,
      g(12, 64, 12, 8),
      [
        target(
          sumBy("cline_compaction_strategy, cline_compaction_reason", COMP, "", RI),
          "{{cline_compaction_strategy}} {{cline_compaction_reason}}",
        ),
      ],
      "short",
      { stack: "normal" },
    ),
  );

  // ---- Captures (collapsed row, y 72)
  const CAP_NOTE =
    "From Cline's provider-request captures (CLINE_CAPTURE_PROVIDER_REQUEST): request-side sizes and estimates (ceil(bytes/3)), not provider usage. Empty unless captures are enabled.";
  const avgBy = (m: string, W: string) =>
    `sum by (cline_capture_stage) (rate(${sel(`${m}_sum`, "")}[${W}])) / sum by (cline_capture_stage) (rate(${sel(`${m}_count`, "")}[${W}]))`;
  const captureRow = {
    id: nextId++,
    type: "row",
    title: "Prompt growth by stage and iteration",
    collapsed: true,
    gridPos: g(0, 72, 24, 1),
    panels: [
      series(
        "Average request payload size by stage",
        `Mean bytes per captured request at each stage (pre_build_for_api, ai_sdk_prompt, wire_request): growth between stages is added by Cline's final build or by serialization. ${CAP_NOTE}`,
        g(0, 73, 12, 8),
        [target(avgBy(PAY, RI), "{{cline_capture_stage}}")],
        "bytes",
      ),
      series(
        "Estimated prompt tokens by stage (p50 / p95)",
        `How large the prompts get as a conversation iterates: the median and 95th percentile of estimated tokens per request. ${CAP_NOTE}`,
        g(12, 73, 12, 8),
        [
          target(quantileBy("0.5", "cline_capture_stage", EST, RI), "p50 {{cline_capture_stage}}"),
          target(quantileBy("0.95", "cline_capture_stage", EST, RI), "p95 {{cline_capture_stage}}", {
            refId: "B",
          }),
        ],
        "short",
        { fill: 0 },
      ),
      bars(
        "Captured requests by stage",
        `Requests captured per stage over the range. ${CAP_NOTE}`,
        g(0, 81, 12, 8),
        [
          target(increaseBy("cline_capture_stage", `${EST}_count`, "", R), "{{cline_capture_stage}}", {
            instant: true,
          }),
        ],
        "short",
      ),
      bars(
        "Payload bytes by stage",
        `Total captured request bytes per stage over the range. ${CAP_NOTE}`,
        g(12, 81, 12, 8),
        [
          target(increaseBy("cline_capture_stage", `${PAY}_sum`, "", R), "{{cline_capture_stage}}", {
            instant: true,
          }),
        ],
        "bytes",
      ),
    ],
  };
  panels.push(captureRow);

  // ---- Latency and tool outcomes (collapsed row, y 89): the GenAI histograms (docs/metrics.md)
  const OPD = "gen_ai_client_operation_duration";
  const TDUR = "cline_tool_duration";
  const latencyRow = {
    id: nextId++,
    type: "row",
    title: "Model latency and tool outcomes",
    collapsed: true,
    gridPos: g(0, 89, 24, 1),
    panels: [
      series(
        "Model latency p50 / p95 by model",
        "gen_ai.client.operation.duration: from the latest message before a request (the prompt or the last tool result it answers) to its response, per Cline's own timestamps.",
        g(0, 90, 12, 8),
        [
          target(quantileBy("0.5", "gen_ai_request_model", OPD, RI), "p50 {{gen_ai_request_model}}"),
          target(quantileBy("0.95", "gen_ai_request_model", OPD, RI), "p95 {{gen_ai_request_model}}", {
            refId: "B",
          }),
        ],
        "s",
        { fill: 0 },
      ),
      series(
        "Tool duration p95 by tool",
        "cline.tool.duration: from the calling message to its tool_result message. Cancelled calls (no result) end at their document's last message, outcome unknown.",
        g(12, 90, 12, 8),
        [target(quantileBy("0.95", "gen_ai_tool_name", TDUR, RI), "{{gen_ai_tool_name}}")],
        "s",
        { fill: 0 },
      ),
      bars(
        "Tool failure rate by tool",
        "Share of final tool calls whose tool_result has is_error=true (never judged from the result's text), over the range: cline.tool.calls by cline.tool.outcome, every final call whether or not it has a duration.",
        g(0, 98, 12, 8),
        [
          target(
            `(${sumBy("gen_ai_tool_name", CALLS, 'cline_tool_outcome="failure"', R)} or ${sumBy("gen_ai_tool_name", CALLS, "", R)} * 0) / ${sumBy("gen_ai_tool_name", CALLS, "", R)}`,
            "{{gen_ai_tool_name}}",
            { instant: true },
          ),
        ],
        "percentunit",
        { decimals: 1 },
      ),
      bars(
        "Tool calls by outcome",
        "Final tool calls by outcome over the range (cline.tool.calls): success, failure (is_error), unknown (no boolean flag, or cut off: no result when its document went quiet).",
        g(12, 98, 12, 8),
        [totalsBy("cline_tool_outcome", CALLS)],
        "short",
      ),
    ],
  };
  panels.push(latencyRow);

  // ---- Team (collapsed row, y 106): the copied resource attributes and the repository on the
  // points (docs/metrics.md "Cardinality"). A series without the label falls in the "" group.
  const TEAM_NOTE =
    "team_id / user_name come from OTEL_RESOURCE_ATTRIBUTES and CLINE_OTEL_USER, copied onto every series by CLINE_OTEL_COPY_RESOURCE_ATTRIBUTES; repositories need CLINE_OTEL_REPOSITORY=true. An empty name means the agent sends none.";
  /** One label's range totals of cost (USD, 2 decimals) or tokens, as bars. */
  function teamTotals(title: string, what: string, label: string, metric: string, pos: Pos): Json {
    const cost = metric === COST;
    return bars(
      title,
      `${what} per ${label} over the range. ${TEAM_NOTE}`,
      pos,
      [totalsBy(label, metric)],
      cost ? "currencyUSD" : "short",
      cost ? { decimals: 2 } : {},
    );
  }
  const teamRow = {
    id: nextId++,
    type: "row",
    title: "Team",
    collapsed: true,
    gridPos: g(0, 106, 24, 1),
    panels: [
      teamTotals("Cost by team", "Computed cost (USD)", "team_id", COST, g(0, 107, 8, 8)),
      teamTotals("Cost by user", "Computed cost (USD)", "user_name", COST, g(8, 107, 8, 8)),
      teamTotals(
        "Cost by repository",
        "Computed cost (USD)",
        "vcs_repository_url_full",
        COST,
        g(16, 107, 8, 8),
      ),
      teamTotals("Tokens by team", "Tokens of every type", "team_id", TOK, g(0, 115, 8, 8)),
      bars(
        "Cache hit ratio by team",
        "cache_read / (input + cache_read + cache_write) per team.id over the range.",
        g(8, 115, 8, 8),
        [
          target(
            `(${sumBy("team_id", TOK, 'type="cache_read"', R)} or ${sumBy("team_id", TOK, 'type=~"input|cache_read|cache_write"', R)} * 0) / ${sumBy("team_id", TOK, 'type=~"input|cache_read|cache_write"', R)}`,
            "{{team_id}}",
            { instant: true },
          ),
        ],
        "percentunit",
        { decimals: 1 },
      ),
      table(
        "Top spenders",
        `The 10 users with the highest computed cost over the range, with their team. ${TEAM_NOTE}`,
        g(16, 115, 8, 8),
        [tableTarget(`topk(10, ${sumBy("team_id, user_name", COST, "", R)})`)],
        "currencyUSD",
        { rename: { team_id: "Team", user_name: "User", Value: "Cost" }, sortBy: "Cost" },
      ),
      teamTotals("Tokens by user", "Tokens of every type", "user_name", TOK, g(0, 123, 12, 8)),
      teamTotals(
        "Tokens by repository",
        "Tokens of every type",
        "vcs_repository_url_full",
        TOK,
        g(12, 123, 12, 8),
      ),
    ],
  };
  panels.push(teamRow);

  // ---- What Cline delivered (collapsed row, y 131): the file edits (docs/metrics.md "What Cline
  // delivered"). "Lines accepted" are the lines ADDED by accepted edits; the rate leaves failed
  // edits out (they did not apply: nobody accepted or rejected them).
  const ACCEPTED_LINES = 'decision="accepted", type="added"';
  const DECIDED = 'decision=~"accepted|rejected"';
  /** accepted / (accepted + rejected) edits by `by` ("" = overall), 0 where none was accepted. */
  const acceptance = (by: string) => {
    const s = (extra: string) => (by ? sumBy(by, EDITS, extra, R) : sumAll(EDITS, extra, R));
    return `(${s('decision="accepted"')} or ${s(DECIDED)} * 0) / ${s(DECIDED)}`;
  };
  const DELIVERED_NOTE =
    "From the file edits Cline proposed, counted from the edits' own text (docs/metrics.md, cline.lines_of_code): lines added by accepted edits. team_id / user_name as in the Team row; repositories need CLINE_OTEL_REPOSITORY=true.";
  function acceptedLinesBy(label: string, pos: Pos): Json {
    return bars(
      `Lines accepted by ${label === "vcs_repository_url_full" ? "repository" : label === "team_id" ? "team" : "user"}`,
      `Lines added by accepted edits per ${label} over the range. ${DELIVERED_NOTE}`,
      pos,
      [target(sumBy(label, LOC, ACCEPTED_LINES, R), `{{${label}}}`, { instant: true })],
      "short",
    );
  }
  const deliveredRow = {
    id: nextId++,
    type: "row",
    title: "What Cline delivered",
    collapsed: true,
    gridPos: g(0, 131, 24, 1),
    panels: [
      acceptedLinesBy("team_id", g(0, 132, 8, 8)),
      acceptedLinesBy("user_name", g(8, 132, 8, 8)),
      acceptedLinesBy("vcs_repository_url_full", g(16, 132, 8, 8)),
      stat(
        "Edit acceptance rate",
        "Accepted / (accepted + rejected) file edits over the range (cline.code_edit.decisions). Failed edits (did not apply) are in neither count; auto-approved edits count as accepted.",
        g(0, 140, 6, 6),
        acceptance(""),
        "percentunit",
        { decimals: 1 },
      ),
      stat(
        "Cost per 1,000 accepted lines",
        "Computed cost (USD) over the range divided by the lines added by accepted edits, per 1,000 lines. The cost is all of Cline's (chat included), not only the edits'.",
        g(6, 140, 6, 6),
        `${sumAll(COST, "", R)} / (${sumAll(LOC, ACCEPTED_LINES, R)} / 1000)`,
        "currencyUSD",
        { decimals: 2 },
      ),
      bars(
        "Edit acceptance rate by team",
        `Accepted / (accepted + rejected) file edits per team over the range. ${DELIVERED_NOTE}`,
        g(12, 140, 12, 6),
        [target(acceptance("team_id"), "{{team_id}}", { instant: true })],
        "percentunit",
        { decimals: 1 },
      ),
      bars(
        "Edits by decision and source",
        "File edits over the range by decision (accepted, rejected, failed) and source (auto: applied without asking; user: asked and answered; unknown: the files cannot tell, e.g. Cline CLI 3.x approvals).",
        g(0, 146, 12, 8),
        [target(sumBy("decision, source", EDITS, "", R), "{{decision}} ({{source}})", { instant: true })],
        "short",
      ),
      bars(
        "Lines by decision and type",
        "Lines added and removed by accepted and rejected edits over the range (failed edits count none). cline_lines_exact=false lines are what the files say of edits that do not hold everything they changed (a lower bound).",
        g(12, 146, 12, 8),
        [target(sumBy("decision, type", LOC, "", R), "{{decision}} {{type}}", { instant: true })],
        "short",
      ),
      // Commits, pull requests and active time (docs/metrics.md "Active time, commits, pull requests, sessions").
      stat(
        "Commits",
        "Commits made by commands the agent ran that succeeded (git commit), over the range (cline.commits).",
        g(0, 154, 4, 6),
        sumAll(COMMITS, "", R),
        "short",
        { decimals: 0 },
      ),
      stat(
        "Pull requests",
        "Pull and merge requests opened by commands the agent ran that succeeded (gh pr create, glab mr create, ...), over the range (cline.pull_requests).",
        g(4, 154, 4, 6),
        sumAll(PRS, "", R),
        "short",
        { decimals: 0 },
      ),
      bars(
        "Commits by repository",
        `Commits made by the agent's commands per repository over the range. ${DELIVERED_NOTE}`,
        g(8, 154, 8, 6),
        [
          target(sumBy("vcs_repository_url_full", COMMITS, "", R), "{{vcs_repository_url_full}}", {
            instant: true,
          }),
        ],
        "short",
      ),
      bars(
        "Active time by user",
        "Active time over the range per user: the agent's (requests, tool runs) and the user's (answering, reviewing, typing the next prompt), from the sessions' timestamps, idle gaps (over 15 min for the user, 30 min for the agent) left out (cline.active_time).",
        g(16, 154, 8, 6),
        [target(sumBy("user_name, type", ACTIVE, "", R), "{{user_name}} ({{type}})", { instant: true })],
        "s",
      ),
    ],
  };
  panels.push(deliveredRow);

  function queryVar(name: string, label: string, labelName: string, deps?: string): Json {
    const match = `{${PRODUCER}${deps ? `, ${deps}` : ""}}`;
    return {
      name,
      label,
      type: "query",
      datasource: DS,
      query: `label_values(${TOK}${match}, ${labelName})`,
      definition: `label_values(${TOK}${match}, ${labelName})`,
      refresh: 2,
      sort: 1,
      multi: true,
      includeAll: true,
      allValue: ".*",
      current: { selected: true, text: ["All"], value: ["$__all"] },
      options: [],
      regex: "",
      hide: 0,
      skipUrlSync: false,
    };
  }

  const dashboard = {
    uid: "cline-otel",
    title: "Cline usage (cline-otel)",
    description:
      "Tokens, cache, cost and tool use of the Cline CLI, exported by cline-otel. Works with the OpenTelemetry Collector's prometheus exporter and with cline-otel's own Prometheus endpoint (same metric names). Every query reads only cline-otel's series (cline_otel_producer=\"cline-otel\"): Cline's own OpenTelemetry export sends cline_* names too.",
    tags: ["cline", "cline-otel", "llm", "opentelemetry"],
    editable: true,
    graphTooltip: 1,
    schemaVersion: 41,
    version: 1,
    time: { from: "now-24h", to: "now" },
    timepicker: {},
    timezone: "browser",
    refresh: "1m",
    fiscalYearStartMonth: 0,
    liveNow: false,
    links: [],
    annotations: {
      list: [
        {
          builtIn: 1,
          datasource: { type: "grafana", uid: "-- Grafana --" },
          enable: true,
          hide: true,
          iconColor: "rgba(0, 211, 255, 1)",
          name: "Annotations & Alerts",
          type: "dashboard",
        },
      ],
    },
    templating: {
      list: [
        {
          name: "datasource",
          label: "Data source",
          type: "datasource",
          query: "prometheus",
          current: { selected: true, text: "Prometheus", value: "cline-otel-prometheus" },
          options: [],
          regex: "",
          hide: 0,
          refresh: 1,
          skipUrlSync: false,
          multi: false,
          includeAll: false,
        },
        queryVar("model", "Model", "gen_ai_request_model"),
        queryVar("provider", "Provider", "gen_ai_provider_name"),
        queryVar(
          "project",
          "Project",
          "cline_project",
          'gen_ai_request_model=~"$model", gen_ai_provider_name=~"$provider"',
        ),
        queryVar("agent", "Agent", "cline_agent"),
        queryVar(
          "session",
          "Session",
          "session_id",
          'gen_ai_request_model=~"$model", gen_ai_provider_name=~"$provider", cline_project=~"$project"',
        ),
      ],
    },
    panels,
  };
  return dashboard;
}
