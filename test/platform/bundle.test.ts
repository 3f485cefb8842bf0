/**
 * The built output users run (dist/, by tools/build.js; the suite's global setup rebuilds it when
 * stale): the bundle's layout, what stays in node_modules, source maps that name existing src/
 * files, and a chunk of its own for each command (so `paths` and `--version` load neither the SDK
 * nor the price catalog: test/bench/startup.test.ts checks what a process actually loads).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ENTRY, EXTERNAL, ROOT } from "../../tools/build.js";

const DIST = join(ROOT, "dist");

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)],
  );
}

const files = filesUnder(DIST).map((f) => relative(DIST, f));
const scripts = files.filter((f) => f.endsWith(".js"));

/** The modules a bundle file was made of, absolute (from its source map; a facade chunk has none). */
function sourcesOf(file: string): string[] {
  const map = join(DIST, `${file}.map`);
  if (!existsSync(map)) return [];
  const json = JSON.parse(readFileSync(map, "utf8")) as { sources: string[] };
  return json.sources.map((s) => resolve(dirname(join(DIST, file)), s));
}

/** Which bundle file holds a src/ module. */
function chunkOf(srcPath: string): string {
  const hits = scripts.filter((f) => sourcesOf(f).includes(join(ROOT, srcPath)));
  expect(hits, srcPath).toHaveLength(1);
  return hits[0] as string;
}

describe("the bundle in dist/", () => {
  it("is the entry, its chunks and their maps, and the build stamp: no per-file compiler output", () => {
    expect(files).toContain(ENTRY);
    const stray = files.filter(
      (f) =>
        f !== ".build-stamp" && f !== ENTRY && f !== `${ENTRY}.map` && !/^chunks\/[^/]+\.js(\.map)?$/.test(f),
    );
    expect(stray).toEqual([]);
    expect(scripts.length).toBeGreaterThan(10);
  });

  it("imports only node:*, the SDK, gRPC and better-sqlite3 from outside itself (commander is bundled)", () => {
    const bare = new Set<string>();
    for (const f of scripts) {
      const code = readFileSync(join(DIST, f), "utf8");
      for (const m of code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^import\s*)["']([^"'./][^"']*)["']/gm)) {
        bare.add(m[1] as string);
      }
    }
    expect(bare.size).toBeGreaterThan(5);
    expect([...bare].filter((s) => !EXTERNAL.some((x) => x.test(s)))).toEqual([]);
    expect([...bare]).not.toContain("commander");
  });

  it("maps every chunk back to files that exist: src/*.ts, and commander's own sources", () => {
    const sources = new Set(scripts.flatMap(sourcesOf));
    expect([...sources].filter((s) => !existsSync(s))).toEqual([]);
    const outside = [...sources].filter(
      (s) =>
        !s.startsWith(join(ROOT, "src", "/")) && !s.startsWith(join(ROOT, "node_modules", "commander", "/")),
    );
    expect(outside).toEqual([]);
    expect(sources).toContain(join(ROOT, "src", "cli", "main.ts"));
    expect(sources).toContain(join(ROOT, "src", "ledger", "schema.ts"));
  });

  it("puts each command, the ledger and the price catalog in chunks of their own, loaded on demand", () => {
    const main = chunkOf("src/cli/main.ts");
    expect(main).toBe(ENTRY);
    const lazy = [
      "src/cli/paths.ts",
      "src/cli/report.ts",
      "src/cli/run.ts",
      "src/ledger/schema.ts",
      ...readdirSync(join(ROOT, "src", "cost", "catalog"))
        .filter((f) => f.endsWith(".generated.ts"))
        .map((f) => `src/cost/catalog/${f}`),
    ].map(chunkOf);
    expect(new Set([main, ...lazy]).size).toBe(lazy.length + 1);
    const entry = readFileSync(join(DIST, ENTRY), "utf8");
    for (const c of lazy) {
      // Not statically imported by the entry (a dynamic import() of its facade is fine).
      expect(entry).not.toMatch(new RegExp(`^import [^(]*["']\\.\\./${c.replace(/[.]/g, "\\.")}["']`, "m"));
    }
  });

  it("the document worker's chunks hold no commander, CLI or config code (it loads only what it reads with)", () => {
    const worker = "chunks/document-worker.js";
    expect(files).toContain(worker);
    const loaded = new Set<string>();
    const walk = (f: string) => {
      if (loaded.has(f)) return;
      loaded.add(f);
      const code = readFileSync(join(DIST, f), "utf8");
      for (const m of code.matchAll(/^import\s[^;]*?["'](\.[^"']+)["']/gm)) {
        walk(relative(DIST, resolve(dirname(join(DIST, f)), m[1] as string)));
      }
    };
    walk(worker);
    const sources = [...loaded].flatMap(sourcesOf);
    expect(sources).toContain(join(ROOT, "src", "adapter", "cline", "document-worker.ts"));
    const heavy = sources.filter((s) =>
      /node_modules\/commander\/|\/src\/(cli|config|ledger|export|cost)\//.test(s),
    );
    expect(heavy).toEqual([]);
  });
});
