import { readFileSync } from "node:fs";
import { join } from "node:path";

export const REPO = join(import.meta.dirname, "..", "..", "..");
export const DASHBOARD_PATH = join(REPO, "otel-collector", "grafana", "dashboards", "cline-otel.json");

export interface GridPos {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
}

export interface Target {
  readonly refId?: string;
  readonly expr?: string;
  readonly instant?: boolean;
  readonly datasource?: { readonly type?: string; readonly uid?: string };
}

export interface Panel {
  readonly id?: number;
  readonly type: string;
  readonly title?: string;
  readonly gridPos: GridPos;
  readonly datasource?: { readonly type?: string; readonly uid?: string };
  readonly targets?: readonly Target[];
  readonly collapsed?: boolean;
  readonly panels?: readonly Panel[];
}

export interface Dashboard {
  readonly uid: string;
  readonly title: string;
  readonly panels: readonly Panel[];
  readonly templating: {
    readonly list: readonly { readonly name: string; readonly type: string; readonly query?: unknown }[];
  };
}

export function loadDashboard(path: string = DASHBOARD_PATH): Dashboard {
  return JSON.parse(readFileSync(path, "utf8")) as Dashboard;
}

/** Every panel that shows data: top-level ones and those inside (collapsed) rows. */
export function dataPanels(d: Dashboard): (Panel & { readonly row?: string })[] {
  const out: (Panel & { readonly row?: string })[] = [];
  for (const p of d.panels) {
    if (p.type === "row") {
      for (const inner of p.panels ?? []) out.push({ ...inner, row: p.title ?? "" });
    } else {
      out.push(p);
    }
  }
  return out;
}

/** Values for the dashboard's variables when a query is run outside Grafana. */
export interface Substitution {
  readonly rateInterval: string;
  readonly range: string;
  /** Regex for every query variable (All = `.*`). */
  readonly all: string;
}

/** Replace Grafana's variables the way Grafana would for "All" selections. */
export function substitute(expr: string, s: Substitution): string {
  return expr
    .replaceAll("$__rate_interval", s.rateInterval)
    .replaceAll("$__range", s.range)
    .replace(/\$\{?(session|agent|model|provider|project)\}?/g, s.all);
}

/** Panel titles, nested rows included, for messages. */
export function describe(p: Panel & { readonly row?: string }): string {
  return p.row ? `${p.row} / ${p.title}` : String(p.title);
}

/** The `label_values(selector, label)` query variables, with Grafana's variables substituted. */
export function labelValuesVariables(
  d: Dashboard,
  s: Substitution,
): { name: string; selector: string; label: string }[] {
  const out: { name: string; selector: string; label: string }[] = [];
  for (const v of d.templating.list) {
    if (v.type !== "query") continue;
    const m = /^label_values\((.+),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$/.exec(String(v.query));
    if (m === null) throw new Error(`variable ${v.name}: unexpected query ${String(v.query)}`);
    out.push({ name: v.name, selector: substitute(m[1] as string, s), label: m[2] as string });
  }
  return out;
}
