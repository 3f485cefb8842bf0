/**
 * Regenerates `cline-llms-0.0.86.generated.ts` from the model catalog of the @cline/llms version
 * the pinned Cline CLI (cline@3.0.65) depends on.
 *
 *   npx tsx tools/catalog/generate.ts [path-to-unpacked-@cline/llms]
 *
 * The path may be the unpacked `package/` directory or the directory holding it. Without a path,
 * the package is fetched with `npm pack` into a temporary directory (never installed into the
 * project) and removed afterwards. The bundle is parsed, never executed (see extract.ts).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { extractCatalog } from "./extract.ts";
import { renderCatalog } from "./render.ts";

const PACKAGE = "@cline/llms";
const VERSION = "0.0.86";
const OUTPUT = fileURLToPath(
  new URL("../../src/cost/catalog/cline-llms-0.0.86.generated.ts", import.meta.url),
);
const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));

function packToTemp(dir: string): string {
  const out = execFileSync("npm", ["pack", `${PACKAGE}@${VERSION}`, "--pack-destination", dir, "--silent"], {
    encoding: "utf8",
  });
  const tarball = out.trim().split("\n").pop();
  if (!tarball) throw new Error(`npm pack ${PACKAGE}@${VERSION} printed no tarball name`);
  execFileSync("tar", ["xzf", join(dir, tarball), "-C", dir]);
  return join(dir, "package");
}

function packageDir(arg: string): string {
  const dir = resolve(arg);
  if (existsSync(join(dir, "package.json"))) return dir;
  if (existsSync(join(dir, "package", "package.json"))) return join(dir, "package");
  throw new Error(`${dir}: no package.json here or in ./package`);
}

/** The ESM entry Cline imports: exports["."].import, else module, else main. */
function entryFile(pkg: Record<string, unknown>): string {
  const exportsField = pkg.exports as Record<string, Record<string, unknown> | undefined> | undefined;
  const entry = exportsField?.["."]?.import ?? pkg.module ?? pkg.main;
  if (typeof entry !== "string") throw new Error("package.json names no entry file");
  return entry.replace(/^\.\//, "");
}

function generate(dir: string): void {
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Record<string, unknown>;
  if (pkg.name !== PACKAGE || pkg.version !== VERSION) {
    throw new Error(
      `${dir}: expected ${PACKAGE}@${VERSION}, found ${String(pkg.name)}@${String(pkg.version)}`,
    );
  }
  const entry = entryFile(pkg);
  const catalog = extractCatalog(readFileSync(join(dir, entry), "utf8"), entry);
  writeFileSync(OUTPUT, renderCatalog(catalog, { source: `${PACKAGE}@${VERSION}`, generatedFrom: entry }));
  // Format with the project's biome so the committed file passes `npm run lint` unchanged.
  const biome = join(PROJECT_ROOT, "node_modules", ".bin", "biome");
  if (!existsSync(biome)) throw new Error(`${biome} not found: run npm install first`);
  execFileSync(biome, ["format", "--write", OUTPUT], { cwd: PROJECT_ROOT, stdio: "inherit" });

  const s = catalog.stats;
  console.log(`wrote ${OUTPUT}`);
  console.log(
    JSON.stringify(
      {
        source: `${PACKAGE}@${VERSION}`,
        generatedFrom: entry,
        catalogVersion: catalog.catalogVersion,
        providers: s.providers,
        models: s.models,
        distinctModelIds: s.distinctModelIds,
        priced: s.priced,
        unpriced: s.unpriced.length,
        nonstandardPricing: s.nonstandardPricing,
        missingCacheRead: s.missingCacheRead,
        missingCacheWrite: s.missingCacheWrite,
        stringPrices: s.stringPrices,
        providerAliases: catalog.providerAliases,
        derived: catalog.derived,
      },
      null,
      2,
    ),
  );
}

const arg = process.argv[2];
if (arg !== undefined) {
  generate(packageDir(arg));
} else {
  const tmp = mkdtempSync(join(tmpdir(), "cline-llms-"));
  try {
    generate(packToTemp(tmp));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
