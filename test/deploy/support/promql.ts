/**
 * A small PromQL lexer, enough to tell metric names from label names and functions in the
 * dashboard's queries, and to check how each counter selector is used.
 */

export interface Token {
  readonly kind: "ident" | "string" | "number" | "var" | "punct" | "op";
  readonly text: string;
}

const KEYWORDS = new Set([
  "and",
  "or",
  "unless",
  "offset",
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "bool",
]);
const GROUPING = new Set(["by", "without", "on", "ignoring", "group_left", "group_right"]);

/** Split a PromQL expression (with Grafana `$var` / `${var}` placeholders) into tokens. */
export function tokenize(expr: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < expr.length) {
    const c = expr[i] ?? "";
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      while (j < expr.length && expr[j] !== c) j += expr[j] === "\\" && c !== "`" ? 2 : 1;
      if (j >= expr.length) throw new Error(`unterminated string at ${i} in: ${expr}`);
      out.push({ kind: "string", text: expr.slice(i + 1, j) });
      i = j + 1;
      continue;
    }
    const variable = /^\$(\{[^}]+\}|[a-zA-Z_][a-zA-Z0-9_]*)/.exec(expr.slice(i));
    if (variable) {
      out.push({ kind: "var", text: variable[0] });
      i += variable[0].length;
      continue;
    }
    const num = /^(\d+(\.\d+)?(ms|[smhdwy])?)+/.exec(expr.slice(i));
    if (num) {
      out.push({ kind: "number", text: num[0] });
      i += num[0].length;
      continue;
    }
    const ident = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(expr.slice(i));
    if (ident) {
      out.push({ kind: "ident", text: ident[0] });
      i += ident[0].length;
      continue;
    }
    const op = /^(=~|!~|!=|==|>=|<=|[=<>+\-*/%^])/.exec(expr.slice(i));
    if (op) {
      out.push({ kind: "op", text: op[0] });
      i += op[0].length;
      continue;
    }
    if ("(){}[],".includes(c)) {
      out.push({ kind: "punct", text: c });
      i++;
      continue;
    }
    throw new Error(`unexpected character ${JSON.stringify(c)} at ${i} in: ${expr}`);
  }
  return out;
}

export type Role = "metric" | "label" | "function" | "keyword" | "other";

/** The role of every token: metric name, label name, function (or aggregation) name, keyword. */
export function roles(tokens: readonly Token[]): Role[] {
  const out: Role[] = tokens.map(() => "other");
  let braceDepth = 0;
  let groupingParen = -1; // paren depth at which a `by (...)`-style label list is open
  let parenDepth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    const next = tokens[i + 1];
    if (t.kind === "punct") {
      if (t.text === "{") braceDepth++;
      else if (t.text === "}") braceDepth--;
      else if (t.text === "(") parenDepth++;
      else if (t.text === ")") {
        if (groupingParen === parenDepth) groupingParen = -1;
        parenDepth--;
      }
      continue;
    }
    if (t.kind !== "ident") continue;
    if (braceDepth > 0) {
      out[i] = "label";
      continue;
    }
    if (groupingParen >= 0 && parenDepth === groupingParen) {
      out[i] = "label";
      continue;
    }
    if (KEYWORDS.has(t.text)) {
      out[i] = "keyword";
      if (GROUPING.has(t.text) && next?.text === "(") groupingParen = parenDepth + 1;
      continue;
    }
    if (next?.text === "(" || (next !== undefined && GROUPING.has(next.text))) {
      out[i] = "function";
      continue;
    }
    out[i] = "metric";
  }
  return out;
}

export function metricNames(expr: string): string[] {
  const tokens = tokenize(expr);
  const r = roles(tokens);
  return [...new Set(tokens.filter((_, i) => r[i] === "metric").map((t) => t.text))];
}

export function labelNames(expr: string): string[] {
  const tokens = tokenize(expr);
  const r = roles(tokens);
  return [...new Set(tokens.filter((_, i) => r[i] === "label").map((t) => t.text))];
}

/** Index just past the `{...}` matcher list that may follow a metric name at `i`. */
function afterSelector(tokens: readonly Token[], i: number): number {
  let j = i + 1;
  if (tokens[j]?.text !== "{") return j;
  let depth = 0;
  for (; j < tokens.length; j++) {
    if (tokens[j]?.text === "{") depth++;
    if (tokens[j]?.text === "}" && --depth === 0) return j + 1;
  }
  return j;
}

function selectorText(tokens: readonly Token[], i: number): string {
  return tokens
    .slice(i, afterSelector(tokens, i))
    .map((t) => (t.kind === "string" ? JSON.stringify(t.text) : t.text))
    .join(" ");
}

/** The function whose argument list directly encloses token `i`, and where that list closes. */
function enclosingCall(tokens: readonly Token[], i: number): { name: string; close: number } | undefined {
  let depth = 0;
  for (let j = i - 1; j >= 0; j--) {
    const t = tokens[j]?.text;
    if (t === ")") depth++;
    else if (t === "(") {
      if (depth === 0) {
        const fn = tokens[j - 1];
        if (fn?.kind !== "ident") return undefined;
        let d = 0;
        for (let k = j; k < tokens.length; k++) {
          if (tokens[k]?.text === "(") d++;
          if (tokens[k]?.text === ")" && --d === 0) return { name: fn.text, close: k };
        }
        return { name: fn.text, close: tokens.length };
      }
      depth--;
    }
  }
  return undefined;
}

/** The label every shipped query selects (docs/metrics.md "Query convention"). */
export const PRODUCER_LABEL = "cline_otel_producer";
export const PRODUCER_VALUE = "cline-otel";

/**
 * Where a set operator's right-hand side starts: just past `and` / `unless` at `op` and an optional
 * `ignoring (...)` / `on (...)` list.
 */
function afterSetOperator(tokens: readonly Token[], op: number): number {
  let j = op + 1;
  const t = tokens[j]?.text;
  if ((t === "ignoring" || t === "on") && tokens[j + 1]?.text === "(") {
    j += 2;
    while (j < tokens.length && tokens[j]?.text !== ")") j++;
    j++;
  }
  return j;
}

/**
 * The set operator (`and` / `unless`) whose right-hand side is the selector at `i` (possibly in
 * parentheses), if any.
 */
function setOperatorBefore(tokens: readonly Token[], i: number): number | undefined {
  let start = i;
  while (tokens[start - 1]?.text === "(" && tokens[start - 2]?.kind !== "ident") start--;
  for (let k = start - 1; k >= 0 && k >= start - 8; k--) {
    const t = tokens[k]?.text;
    if ((t === "and" || t === "unless") && afterSetOperator(tokens, k) === start) return k;
  }
  return undefined;
}

/**
 * Does the `{...}` after the metric name at `i` choose its producer: `cline_otel_producer="cline-otel"`
 * (ours), or `cline_otel_producer=""` (deliberately the others', e.g. Cline's own export in the docs)?
 */
function selectsProducer(tokens: readonly Token[], i: number): boolean {
  const end = afterSelector(tokens, i);
  for (let k = i + 2; k + 2 < end; k++) {
    const value = tokens[k + 2];
    if (
      tokens[k]?.text === PRODUCER_LABEL &&
      tokens[k + 1]?.text === "=" &&
      value?.kind === "string" &&
      (value.text === PRODUCER_VALUE || value.text === "")
    )
      return true;
  }
  return false;
}

/**
 * The selectors of `cline_*` / `gen_ai_*` series whose values the expression uses without selecting
 * cline-otel's producer label (docs/metrics.md "Query convention"). Exempt: a bare series right of
 * `and` / `unless` (a presence filter, e.g. the window start of the born-in-window idiom, matched
 * `ignoring (cline_otel_producer)`), whose values are never used. Recording rules (`cline:...`) are
 * built from selected series and are not series of a producer.
 */
export function unselectedProducer(expr: string): string[] {
  const tokens = tokenize(expr);
  const r = roles(tokens);
  const out: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const name = (tokens[i] as Token).text;
    if (r[i] !== "metric" || !/^(cline|gen_ai)_[a-zA-Z0-9_]*$/.test(name)) continue;
    if (selectsProducer(tokens, i)) continue;
    if (setOperatorBefore(tokens, i) !== undefined && tokens[afterSelector(tokens, i)]?.text !== "[")
      continue;
    out.push(name);
  }
  return out;
}

/** A selector's text without the producer matcher (the two sides of the idiom differ only there). */
function withoutProducer(text: string): string {
  return text
    .replace(`${PRODUCER_LABEL} = ${JSON.stringify(PRODUCER_VALUE)} , `, "")
    .replace(` , ${PRODUCER_LABEL} = ${JSON.stringify(PRODUCER_VALUE)}`, "")
    .replace(`{ ${PRODUCER_LABEL} = ${JSON.stringify(PRODUCER_VALUE)} }`, "")
    .trim();
}

/**
 * Every use of a counter must go through rate()/increase(). Two more forms are allowed, and only
 * as the "series born inside the window" idiom of the dashboard:
 *   `X offset W` right after `and` / `unless` (a presence test: its value is never used; it may be
 *   matched `ignoring (...)` / `on (...)`), and
 *   `last_over_time(X[W]) unless X offset W` (a series that did not exist W ago counts in full).
 * Returns one message per violation.
 */
export function counterUseViolations(expr: string, isCounter: (name: string) => boolean): string[] {
  const tokens = tokenize(expr);
  const r = roles(tokens);
  const problems: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    if (r[i] !== "metric" || !isCounter((tokens[i] as Token).text)) continue;
    const name = (tokens[i] as Token).text;
    const end = afterSelector(tokens, i);
    if (tokens[end]?.text === "offset" && setOperatorBefore(tokens, i) !== undefined) continue;
    const call = enclosingCall(tokens, i);
    if (call === undefined) {
      problems.push(`${name} is used raw (not inside rate/increase)`);
      continue;
    }
    if (call.name === "rate" || call.name === "increase") continue;
    if (call.name === "last_over_time") {
      const sel = selectorText(tokens, i);
      const after = tokens[call.close + 1];
      const guardStart = afterSetOperator(tokens, call.close + 1);
      const guardOk =
        after?.text === "unless" &&
        (tokens[guardStart] as Token | undefined)?.text === name &&
        withoutProducer(selectorText(tokens, guardStart)) === withoutProducer(sel) &&
        tokens[afterSelector(tokens, guardStart)]?.text === "offset";
      const hasIncrease = tokens.some(
        (t, k) =>
          t.text === "increase" && tokens[k + 2]?.text === name && selectorText(tokens, k + 2) === sel,
      );
      if (guardOk && hasIncrease) continue;
      problems.push(`${name} in last_over_time() outside the born-in-window idiom`);
      continue;
    }
    problems.push(`${name} is used inside ${call.name}() instead of rate/increase`);
  }
  return problems;
}
