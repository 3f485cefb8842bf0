/**
 * Every shipped query selects cline-otel's own series (docs/metrics.md "Query convention"): each
 * selector of a `cline_*` / `gen_ai_*` series whose value is used matches
 * `cline_otel_producer="cline-otel"`, in the dashboard, the alert and recording rules, and every
 * PromQL example in the docs; every Honeycomb metric query has the same filter. The behaviour
 * (a second producer changes no panel and no rule) is second-producer.test.ts; this is the static
 * check that also reaches the docs, which no Prometheus runs.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { dataPanels, describe as describePanel, loadDashboard, REPO } from "./support/dashboard.ts";
import { counterUseViolations, tokenize, unselectedProducer } from "./support/promql.ts";

interface Rule {
  readonly record?: string;
  readonly alert?: string;
  readonly expr: string;
}

function ruleExprs(file: string): Rule[] {
  const doc = parse(readFileSync(join(REPO, "otel-collector", file), "utf8")) as {
    groups: { rules: Rule[] }[];
  };
  return doc.groups.flatMap((g) => g.rules);
}

/** Markdown the user reads: README.md and docs/*.md (service/ holds no queries). */
function docs(): { file: string; text: string }[] {
  const files = [
    "README.md",
    ...readdirSync(join(REPO, "docs"))
      .filter((f) => f.endsWith(".md"))
      .map((f) => `docs/${f}`),
  ];
  return files.map((file) => ({ file, text: readFileSync(join(REPO, file), "utf8") }));
}

/** A Prometheus series of ours: counters end in _total, histograms in _bucket, _sum, _count. */
const OUR_SERIES = /\b(cline|gen_ai)_[a-z0-9_]*_(total|bucket|sum|count)\b/;
/** `name{label, label}`: a series' label names in prose, not a selector. */
const LABEL_LIST = /^[a-z0-9_]+\{[a-z0-9_, ]+\}$/;

/**
 * The PromQL in a markdown text: ```promql blocks, and inline code spans that are a query (a
 * `cline_*` / `gen_ai_*` name with a selector, a range or a call), not a bare name in a table.
 * LogQL (`{service_name=...} | ...`) is not PromQL and is left out.
 */
function promqlOf(markdown: string): string[] {
  const out: string[] = [];
  for (const m of markdown.matchAll(/```promql\n([\s\S]*?)```/g)) out.push((m[1] as string).trim());
  const prose = markdown.replace(/```[\s\S]*?```/g, "");
  for (const m of prose.matchAll(/`([^`]+)`/g)) {
    const span = m[1] as string;
    if (!OUR_SERIES.test(span) || !/[({[]/.test(span) || span.includes("| ") || LABEL_LIST.test(span))
      continue;
    out.push(span);
  }
  return out;
}

describe("every shipped query selects cline-otel's producer", () => {
  it("the dashboard: every panel target and every variable query", () => {
    const d = loadDashboard();
    const bad: string[] = [];
    for (const p of dataPanels(d))
      for (const t of p.targets ?? [])
        for (const name of unselectedProducer(t.expr ?? ""))
          bad.push(`${describePanel(p)} [${t.refId}]: ${name}`);
    for (const v of d.templating.list) {
      if (v.type !== "query") continue;
      const m = /^label_values\((.+),\s*[a-zA-Z_][a-zA-Z0-9_]*\)$/.exec(String(v.query));
      for (const name of unselectedProducer(m?.[1] ?? "")) bad.push(`variable ${v.name}: ${name}`);
    }
    expect(bad).toEqual([]);
    expect(dataPanels(d).length).toBeGreaterThan(20);
  });

  it("the rules: every recording and alerting expression", () => {
    const rules = [...ruleExprs("prometheus-rules.yml"), ...ruleExprs("prometheus-budget.yml")];
    expect(rules.length).toBeGreaterThan(10);
    const bad = rules.flatMap((r) => unselectedProducer(r.expr).map((n) => `${r.record ?? r.alert}: ${n}`));
    expect(bad).toEqual([]);
  });

  it("the docs: every PromQL example in README.md and docs/*.md", () => {
    const bad: string[] = [];
    let seen = 0;
    for (const { file, text } of docs()) {
      for (const q of promqlOf(text)) {
        seen++;
        // A query the lexer cannot read is a query nobody checked: name it.
        let names: string[];
        try {
          tokenize(q);
          names = unselectedProducer(q);
        } catch (e) {
          bad.push(`${file}: unreadable ${JSON.stringify(q)}: ${(e as Error).message}`);
          continue;
        }
        for (const n of names) bad.push(`${file}: ${n} in ${q}`);
      }
    }
    expect(bad).toEqual([]);
    // The docs do hold examples (captures.md's blocks, metrics.md's and the README's spans).
    expect(seen).toBeGreaterThan(12);
  });

  it("the docs: every Honeycomb metric query filters on cline_otel.producer", () => {
    const text = readFileSync(join(REPO, "docs", "backends.md"), "utf8");
    const rows = text
      .split("\n")
      .filter((l) => /^\| .* \| `[A-Z_]+\((cline|gen_ai)\./.test(l))
      .map((l) => l.split(" | "));
    expect(rows.length).toBeGreaterThan(15);
    const bad: string[] = [];
    for (const cells of rows) {
      const where = cells[2] ?? "";
      // Events are selected by their name, which only cline-otel's events have (backends.md).
      if (where.includes("name = cline.")) continue;
      if (!where.includes("`cline_otel.producer = cline-otel`")) bad.push(cells.join(" | "));
    }
    expect(bad).toEqual([]);
  });

  it("is a check that can fail", () => {
    const P = 'cline_otel_producer="cline-otel"';
    // What the shipped queries were before the convention: every one of these names a series.
    expect(unselectedProducer('sum by (type) (increase(cline_token_usage_total{type="input"}[1h]))')).toEqual(
      ["cline_token_usage_total"],
    );
    expect(
      unselectedProducer(
        "histogram_quantile(0.95, sum by (le) (rate(gen_ai_client_operation_duration_bucket[5m])))",
      ),
    ).toEqual(["gen_ai_client_operation_duration_bucket"]);
    // The born-in-window idiom: the window start is a filter; the last_over_time side is a value.
    const idiom = (left: string, right: string) =>
      `(increase(${left}[1h]) and ignoring (cline_otel_producer) ${right} offset 1h) or (last_over_time(${left}[1h]) unless ignoring (cline_otel_producer) ${right} offset 1h)`;
    expect(unselectedProducer(idiom(`cline_cost_usage_total{${P}}`, "cline_cost_usage_total"))).toEqual([]);
    expect(unselectedProducer(idiom("cline_cost_usage_total", "cline_cost_usage_total"))).toEqual([
      "cline_cost_usage_total",
      "cline_cost_usage_total",
    ]);
    // Another value than ours, or a regex that also matches a series without the label, is not a selection.
    expect(unselectedProducer('cline_requests_total{cline_otel_producer=~"cline-otel|"}')).toEqual([
      "cline_requests_total",
    ]);
    expect(unselectedProducer('rate(cline_requests_total{cline_otel_producer="cline"}[5m])')).toEqual([
      "cline_requests_total",
    ]);
    // Deliberately another producer's series (Cline's own, in backends.md) is a choice, not an omission.
    expect(unselectedProducer('cline_tokens_input_total{cline_otel_producer=""}')).toEqual([]);
    // The idiom with the ignoring clause is still the idiom for the counter-use check.
    expect(
      counterUseViolations(idiom(`cline_cost_usage_total{${P}}`, "cline_cost_usage_total"), () => true),
    ).toEqual([]);
    expect(promqlOf("a `sum(rate(cline_requests_total[5m]))` b `cline_requests_total` c")).toEqual([
      "sum(rate(cline_requests_total[5m]))",
    ]);
  });
});
