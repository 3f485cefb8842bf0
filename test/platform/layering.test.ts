/**
 * The house's layering (docs/design.md, "Layers"): every import in src/ is parsed, and a circle
 * or an import against the layer rule fails. The imports are read with TypeScript's own
 * `preProcessFile` (static, re-export, side-effect and dynamic `import()`, comments and strings
 * skipped), already a dev dependency for the catalog generator: no new dependency, and no
 * regular expression to fool.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.ts";

/**
 * Each folder of src/ and its rank: a module imports from its own folder or from a folder of a
 * LOWER rank, never up and never sideways (two folders of one rank do not know each other).
 */
const LAYERS: Readonly<Record<string, number>> = Object.freeze({
  scan: 0, // the allow-list scanner
  util: 0, // logger, heap policy, the environment reader
  vcs: 0, // a workspace's git remote and branch, read-only from its git files (no agent's specifics)
  adapter: 1, // the vocabulary (src/adapter/*.ts) and each agent's adapter (src/adapter/<agent>/)
  config: 2, // flags -> env -> defaults (resolves the agent's paths through its adapter)
  cost: 3,
  ledger: 3,
  collector: 4,
  export: 5,
  report: 5,
  cli: 6, // the wiring: commands pick the adapter, the ledger and the exporters
});

/** The generic layers: they know the adapters' vocabulary, never one agent's modules. */
const GENERIC: readonly string[] = Object.freeze(["ledger", "collector", "export"]);

type Graph = ReadonlyMap<string, readonly string[]>;

/** Every `.ts` file under src/ (relative, `/`-separated) and the src/ files it imports. */
function importGraph(srcDir: string): Graph {
  const graph = new Map<string, string[]>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".ts")) {
        const info = ts.preProcessFile(readFileSync(p, "utf8"), true, true);
        const targets = info.importedFiles
          .map((f) => f.fileName)
          .filter((spec) => spec.startsWith("."))
          .map((spec) =>
            relative(srcDir, resolve(dirname(p), spec))
              .split("\\")
              .join("/"),
          );
        graph.set(relative(srcDir, p).split("\\").join("/"), targets);
      }
    }
  };
  walk(srcDir);
  return graph;
}

const folderOf = (file: string): string => file.split("/")[0] as string;

/** The imports that break the layer rule, as `from -> to (why)`. */
function layerViolations(graph: Graph): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph) {
    const a = folderOf(from);
    for (const to of targets) {
      const b = folderOf(to);
      if (a === b) continue;
      const ra = LAYERS[a];
      const rb = LAYERS[b];
      if (ra === undefined || rb === undefined) out.push(`${from} -> ${to} (a folder without a layer)`);
      else if (rb >= ra) out.push(`${from} -> ${to} (${a} may not import ${b})`);
      else if (GENERIC.includes(a) && b === "adapter" && to.split("/").length > 2)
        out.push(`${from} -> ${to} (a generic layer imports one agent's adapter)`);
    }
  }
  return out;
}

/** Every import circle between files (Tarjan's strongly connected components of size > 1, or a self-import). */
function importCircles(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) circles.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return circles;
}

describe("the house's layering (docs/design.md)", () => {
  const graph = importGraph(join(ROOT, "src"));

  it("sees the whole of src/: every folder has a layer, and the known arrows are found", () => {
    expect(graph.size).toBeGreaterThan(100);
    for (const f of graph.keys()) expect(LAYERS[folderOf(f)], f).toBeDefined();
    // A static, a type-only and a dynamic import, each read as an arrow.
    expect(graph.get("collector/pass.ts")).toContain("ledger/ledger.ts");
    expect(graph.get("collector/watch.ts")).toContain("adapter/types.ts");
    expect(graph.get("cli/run.ts")).toContain("collector/loop.ts");
  });

  it("no import runs up or sideways, and no generic layer imports an agent's adapter", () => {
    expect(layerViolations(graph)).toEqual([]);
  });

  it("no import circle", () => {
    expect(importCircles(graph)).toEqual([]);
  });

  it("the checks catch what they are for (a synthetic house)", () => {
    const bad: Graph = new Map([
      ["adapter/cline/paths.ts", ["config/env.ts"]],
      ["config/env.ts", []],
      ["ledger/a.ts", ["adapter/cline/x.ts", "adapter/types.ts"]],
      ["adapter/cline/x.ts", []],
      ["adapter/types.ts", []],
      ["export/pages.ts", ["export/producer.ts"]],
      ["export/producer.ts", ["export/pages.ts"]],
      ["report/r.ts", ["export/pages.ts"]],
    ]);
    expect(layerViolations(bad)).toEqual([
      "adapter/cline/paths.ts -> config/env.ts (adapter may not import config)",
      "ledger/a.ts -> adapter/cline/x.ts (a generic layer imports one agent's adapter)",
      "report/r.ts -> export/pages.ts (report may not import export)",
    ]);
    expect(importCircles(bad)).toEqual([["export/pages.ts", "export/producer.ts"]]);
  });
});
