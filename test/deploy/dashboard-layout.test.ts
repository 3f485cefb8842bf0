import { describe, expect, it } from "vitest";
import { buildDashboard } from "../../otel-collector/grafana/dashboard-model.ts";
import { ALERTS_SERIES, COUNTER_NAMES, LABEL_NAMES, METRIC_NAMES } from "./support/contract.ts";
import { dataPanels, describe as describePanel, loadDashboard, type Panel } from "./support/dashboard.ts";
import { counterUseViolations, labelNames, metricNames, roles, tokenize } from "./support/promql.ts";

const dashboard = loadDashboard();
const panels = dataPanels(dashboard);

function overlaps(a: Panel["gridPos"], b: Panel["gridPos"]): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

describe("PromQL lexer used by these checks", () => {
  it("tells metric names from labels, functions and keywords", () => {
    const expr =
      'sum by (type) (increase(cline_token_usage_total{type="input", session_id=~"$session"}[$__range]) and cline_token_usage_total offset 5m)';
    const t = tokenize(expr);
    const r = roles(t);
    const pick = (role: string) => t.filter((_, i) => r[i] === role).map((x) => x.text);
    expect(pick("metric")).toEqual(["cline_token_usage_total", "cline_token_usage_total"]);
    expect(pick("label")).toEqual(["type", "type", "session_id"]);
    expect(pick("function")).toEqual(["sum", "increase"]);
    expect(metricNames("histogram_quantile(0.95, sum by (le) (rate(x_bucket[1m])))")).toEqual(["x_bucket"]);
  });

  it("flags raw counters and accepts rate/increase and the born-in-window idiom", () => {
    const counter = (n: string) => n.endsWith("_total");
    expect(counterUseViolations("sum(a_total)", counter)).toHaveLength(1);
    expect(counterUseViolations("a_total", counter)).toHaveLength(1);
    expect(counterUseViolations("max_over_time(a_total[5m])", counter)).toHaveLength(1);
    expect(counterUseViolations("sum(rate(a_total[5m]))", counter)).toEqual([]);
    const idiom =
      '(increase(a_total{x="1"}[5m]) and a_total{x="1"} offset 5m) or (last_over_time(a_total{x="1"}[5m]) unless a_total{x="1"} offset 5m)';
    expect(counterUseViolations(idiom, counter)).toEqual([]);
    // last_over_time without its guard, or guarded by a different selector, is a raw counter.
    expect(counterUseViolations("last_over_time(a_total[5m])", counter)).toHaveLength(1);
    expect(
      counterUseViolations(
        "increase(a_total[5m]) or (last_over_time(a_total[5m]) unless b_total offset 5m)",
        counter,
      ),
    ).toHaveLength(1);
  });
});

describe("dashboard layout", () => {
  it("is exactly what dashboard-model.ts generates (npx tsx otel-collector/grafana/generate-dashboard.ts)", () => {
    expect(dashboard).toEqual(buildDashboard());
  });

  it("has a uid, a title and the variables the panels use", () => {
    expect(dashboard.uid).toBe("cline-otel");
    expect(dashboard.title.length).toBeGreaterThan(0);
    const vars = dashboard.templating.list.map((v) => v.name);
    for (const v of ["datasource", "model", "project", "session"]) expect(vars).toContain(v);
    const used = new Set<string>();
    for (const p of panels)
      for (const t of p.targets ?? [])
        for (const m of (t.expr ?? "").matchAll(/\$\{?([a-z]+)\b/g)) used.add(m[1] as string);
    for (const v of used) expect(vars, `$${v} is used but not defined`).toContain(v);
  });

  it("puts every panel on the 24-column grid at integer positions without overlaps", () => {
    const all: { name: string; pos: Panel["gridPos"] }[] = [];
    for (const p of dashboard.panels) {
      all.push({ name: String(p.title), pos: p.gridPos });
      // A collapsed row's panels are laid out below it when it opens: they must fit there too.
      for (const inner of p.panels ?? [])
        all.push({ name: `${p.title} / ${inner.title}`, pos: inner.gridPos });
    }
    expect(all.length).toBeGreaterThan(10);
    for (const { name, pos } of all) {
      for (const k of ["x", "y", "w", "h"] as const)
        expect(Number.isInteger(pos[k]), `${name}.${k}`).toBe(true);
      expect(pos.x, name).toBeGreaterThanOrEqual(0);
      expect(pos.y, name).toBeGreaterThanOrEqual(0);
      expect(pos.w, name).toBeGreaterThan(0);
      expect(pos.h, name).toBeGreaterThan(0);
      expect(pos.x + pos.w, name).toBeLessThanOrEqual(24);
    }
    for (let i = 0; i < all.length; i++) {
      for (let j = i + 1; j < all.length; j++) {
        const a = all[i] as (typeof all)[number];
        const b = all[j] as (typeof all)[number];
        expect(overlaps(a.pos, b.pos), `${a.name} overlaps ${b.name}`).toBe(false);
      }
    }
  });

  it("gives every data panel a title, a datasource and at least one target", () => {
    for (const p of panels) {
      const name = describePanel(p);
      expect(p.title?.trim(), `panel ${p.id}`).toBeTruthy();
      expect(p.datasource?.uid, name).toBeTruthy();
      expect(p.targets?.length ?? 0, name).toBeGreaterThan(0);
      for (const t of p.targets ?? []) {
        expect(t.expr?.trim(), `${name} ${t.refId}`).toBeTruthy();
        expect(t.datasource?.uid ?? p.datasource?.uid, `${name} ${t.refId}`).toBeTruthy();
      }
    }
  });

  it("keeps the prompt-growth panels in a collapsed row", () => {
    const row = dashboard.panels.find((p) => p.type === "row" && /prompt growth/i.test(p.title ?? ""));
    expect(row?.collapsed).toBe(true);
    expect(row?.panels?.length ?? 0).toBeGreaterThan(0);
    const used = new Set(
      (row?.panels ?? []).flatMap((p) => (p.targets ?? []).flatMap((t) => metricNames(t.expr ?? ""))),
    );
    expect([...used].some((m) => m.startsWith("cline_request_payload_size"))).toBe(true);
    expect([...used].some((m) => m.startsWith("cline_request_estimated_tokens"))).toBe(true);
  });
});

describe("dashboard queries", () => {
  const queries = panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({ panel: describePanel(p), expr: t.expr ?? "" })),
  );

  it("name only metrics and labels of the contract, in their Prometheus form", () => {
    for (const { panel, expr } of queries) {
      const metrics = metricNames(expr);
      expect(metrics.length, `${panel}: ${expr}`).toBeGreaterThan(0);
      for (const m of metrics) expect(METRIC_NAMES.has(m), `${panel} uses unknown metric ${m}`).toBe(true);
      for (const l of labelNames(expr))
        expect(LABEL_NAMES.has(l), `${panel} uses unknown label ${l}`).toBe(true);
    }
  });

  it("use counters only through rate/increase (or the born-in-window idiom), with Grafana's intervals", () => {
    for (const { panel, expr } of queries) {
      expect(
        counterUseViolations(expr, (m) => COUNTER_NAMES.has(m)),
        `${panel}: ${expr}`,
      ).toEqual([]);
      // Windows come from Grafana, never a fixed duration that breaks at other zoom levels.
      for (const w of expr.matchAll(/\[([^\]]+)\]/g))
        expect(["$__rate_interval", "$__range"], panel).toContain(w[1]);
      for (const o of expr.matchAll(/offset\s+(\$\w+|[0-9a-z]+)/g))
        expect(["$__rate_interval", "$__range"], panel).toContain(o[1]);
    }
  });

  it("aggregate with explicit label lists", () => {
    for (const { panel, expr } of queries) {
      expect(/\bwithout\s*\(/.test(expr), `${panel} uses without()`).toBe(false);
      // Every sum is either a total (no labels left) or `sum by (...)` with named labels.
      for (const m of expr.matchAll(/\bsum\s*(by\s*\(([^)]*)\))?\s*\(/g)) {
        if (m[1] !== undefined) expect((m[2] ?? "").trim().length, panel).toBeGreaterThan(0);
      }
    }
  });

  it("filter every metric selector by the dashboard's variables", () => {
    for (const { panel, expr } of queries) {
      const tokens = tokenize(expr);
      const r = roles(tokens);
      tokens.forEach((t, i) => {
        // Prometheus' ALERTS series carries the labels of each alert, not of the usage metrics.
        if (r[i] !== "metric" || t.text === ALERTS_SERIES) return;
        expect(tokens[i + 1]?.text, `${panel}: ${t.text} has no label matchers`).toBe("{");
        const close = tokens.findIndex((x, k) => k > i && x.text === "}");
        const matchers = tokens.slice(i + 1, close).map((x) => x.text);
        for (const v of ["$session", "$model", "$project"])
          expect(matchers, `${panel}: ${t.text}`).toContain(v);
      });
    }
  });
});
