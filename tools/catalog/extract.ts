/**
 * Reads the model catalog out of the bundled @cline/llms JavaScript WITHOUT running it: the
 * bundle is parsed with the TypeScript compiler and only pure literals (objects, arrays,
 * strings, numbers, booleans) are converted to values. Anything else is an error, so no code
 * from the package is ever evaluated.
 *
 * Two literals are taken from the bundle:
 *  - the generated catalog `{ version, providers: { <provider>: { <model>: ModelInfo } } }`;
 *  - Cline's models.dev mapping table `[{ modelsDevKey, generatedProviderId?, runtimeProviderId? }]`
 *    (what `resolveProviderModelCatalogKeys` reads), which says which catalog providers a runtime
 *    provider id draws its models from.
 */
import ts from "typescript";

/** [input, output, cacheRead, cacheWrite] in USD per million tokens; null = absent (Cline's default applies). */
export type PriceTuple = readonly [number, number, number | null, number | null];

export interface ExtractedCatalog {
  /** The catalog's own `version` field (a generation timestamp). */
  readonly catalogVersion: number;
  /** provider -> model -> price, for models with numeric input AND output prices; keys sorted. */
  readonly prices: Readonly<Record<string, Readonly<Record<string, PriceTuple>>>>;
  /** Runtime provider id -> catalog providers it also draws models from (Cline's mapping table). */
  readonly providerAliases: Readonly<Record<string, readonly string[]>>;
  /** models.dev vendor key -> catalog provider id, where they differ (e.g. openai -> openai-native). */
  readonly vendorPrefixes: Readonly<Record<string, string>>;
  /**
   * Models Cline synthesises at runtime from catalog entries, priced like their source:
   * claude-code's `opus` / `sonnet` / `haiku` (see `claudeCodeAliases`).
   */
  readonly derived: Readonly<Record<string, Readonly<Record<string, PriceTuple>>>>;
  readonly stats: CatalogStats;
}

export interface CatalogStats {
  readonly providers: number;
  readonly models: number;
  readonly distinctModelIds: number;
  /** Models with numeric input AND output prices: the only ones Cline prices. */
  readonly priced: number;
  /** Models Cline cannot price (no numeric input or output price), as `provider/model`. */
  readonly unpriced: readonly string[];
  /** Models whose pricing carries keys beyond the four Cline reads (tiers would show up here). */
  readonly nonstandardPricing: readonly string[];
  /** Priced models with no numeric cacheRead / cacheWrite (Cline's defaults apply to them). */
  readonly missingCacheRead: number;
  readonly missingCacheWrite: number;
  /** Prices given as numeric strings (Cline accepts those too). */
  readonly stringPrices: number;
}

export class CatalogExtractError extends Error {
  override readonly name = "CatalogExtractError";
}

type Literal = null | boolean | number | string | Literal[] | { [key: string]: Literal };

const PRICE_KEYS = new Set(["input", "output", "cacheRead", "cacheWrite"]);

/** Parses bundle text and extracts the catalog. `fileName` is only used in error messages. */
export function extractCatalog(bundleText: string, fileName: string): ExtractedCatalog {
  const sf = ts.createSourceFile(fileName, bundleText, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS);
  const catalogNodes: ts.ObjectLiteralExpression[] = [];
  const mappingNodes: ts.ArrayLiteralExpression[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isObjectLiteralExpression(node) && isCatalogLiteral(node)) {
      catalogNodes.push(node);
      return;
    }
    if (ts.isArrayLiteralExpression(node) && isMappingLiteral(node)) {
      mappingNodes.push(node);
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);

  const catalog = only(catalogNodes, sf, "the model catalog literal `{version, providers}`");
  const mapping = only(mappingNodes, sf, "the models.dev mapping table `[{modelsDevKey, ...}]`");
  const catalogValue = toLiteral(catalog, sf);
  const mappingValue = toLiteral(mapping, sf);
  return buildCatalog(catalogValue, mappingValue, fileName);
}

function propName(p: ts.ObjectLiteralElementLike): string | undefined {
  const n = p.name;
  if (n && (ts.isIdentifier(n) || ts.isStringLiteral(n) || ts.isNumericLiteral(n))) return n.text;
  return undefined;
}

function isCatalogLiteral(node: ts.ObjectLiteralExpression): boolean {
  const names = node.properties.map(propName);
  return names.length === 2 && names[0] === "version" && names[1] === "providers";
}

function isMappingLiteral(node: ts.ArrayLiteralExpression): boolean {
  return (
    node.elements.length > 0 &&
    node.elements.every(
      (e) => ts.isObjectLiteralExpression(e) && e.properties.some((p) => propName(p) === "modelsDevKey"),
    )
  );
}

function only<T extends ts.Node>(nodes: readonly T[], sf: ts.SourceFile, what: string): T {
  if (nodes.length === 1 && nodes[0]) return nodes[0];
  const where = nodes.map((n) => position(n, sf)).join(", ");
  throw new CatalogExtractError(
    `${sf.fileName}: expected exactly one ${what}, found ${nodes.length}${where ? ` (at ${where})` : ""}`,
  );
}

function position(node: ts.Node, sf: ts.SourceFile): string {
  const { line, character } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
  return `${line + 1}:${character + 1}`;
}

/** Converts a pure literal expression to a value; throws on anything that would need evaluation. */
function toLiteral(node: ts.Node, sf: ts.SourceFile): Literal {
  if (ts.isObjectLiteralExpression(node)) {
    const out: { [key: string]: Literal } = Object.create(null);
    for (const p of node.properties) {
      const key = propName(p);
      if (!ts.isPropertyAssignment(p) || key === undefined) {
        throw new CatalogExtractError(`${sf.fileName}:${position(p, sf)}: not a plain literal property`);
      }
      out[key] = toLiteral(p.initializer, sf);
    }
    return out;
  }
  if (ts.isArrayLiteralExpression(node)) return node.elements.map((e) => toLiteral(e, sf));
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isNumericLiteral(node)) return Number(node.text);
  if (node.kind === ts.SyntaxKind.TrueKeyword) return true;
  if (node.kind === ts.SyntaxKind.FalseKeyword) return false;
  if (node.kind === ts.SyntaxKind.NullKeyword) return null;
  if (ts.isPrefixUnaryExpression(node) && ts.isNumericLiteral(node.operand)) {
    const n = Number(node.operand.text);
    // Minifiers write `!0` / `!1` for booleans and `-x` for negatives.
    if (node.operator === ts.SyntaxKind.MinusToken) return -n;
    if (node.operator === ts.SyntaxKind.ExclamationToken) return !n;
  }
  throw new CatalogExtractError(
    `${sf.fileName}:${position(node, sf)}: not a literal: ${node.getText(sf).slice(0, 60)}`,
  );
}

function isRecord(v: Literal | undefined): v is { [key: string]: Literal } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Cline's own number coercion for prices: a finite number, or a non-blank numeric string. */
export function clineNumber(v: unknown): number | undefined {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "string" && v.trim().length > 0 && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

function sortedKeys(o: object): string[] {
  // Code-unit order: locale-independent, so the generated file is byte-stable.
  return Object.keys(o).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function buildCatalog(catalog: Literal, mapping: Literal, fileName: string): ExtractedCatalog {
  if (!isRecord(catalog) || typeof catalog.version !== "number" || !isRecord(catalog.providers)) {
    throw new CatalogExtractError(`${fileName}: catalog literal has an unexpected shape`);
  }
  const providers = catalog.providers;
  const prices: Record<string, Record<string, PriceTuple>> = {};
  const unpriced: string[] = [];
  const nonstandardPricing: string[] = [];
  const modelIds = new Set<string>();
  let models = 0;
  let priced = 0;
  let missingCacheRead = 0;
  let missingCacheWrite = 0;
  let stringPrices = 0;

  for (const provider of sortedKeys(providers)) {
    const list = providers[provider];
    if (!isRecord(list)) throw new CatalogExtractError(`${fileName}: provider ${provider} is not an object`);
    const row: Record<string, PriceTuple> = {};
    for (const model of sortedKeys(list)) {
      models += 1;
      modelIds.add(model);
      const info = list[model];
      const pricing = isRecord(info) ? info.pricing : undefined;
      if (!isRecord(pricing)) {
        unpriced.push(`${provider}/${model}`);
        continue;
      }
      if (Object.keys(pricing).some((k) => !PRICE_KEYS.has(k)))
        nonstandardPricing.push(`${provider}/${model}`);
      for (const k of PRICE_KEYS) if (typeof pricing[k] === "string") stringPrices += 1;
      const input = clineNumber(pricing.input);
      const output = clineNumber(pricing.output);
      if (input === undefined || output === undefined) {
        unpriced.push(`${provider}/${model}`);
        continue;
      }
      const cacheRead = clineNumber(pricing.cacheRead) ?? null;
      const cacheWrite = clineNumber(pricing.cacheWrite) ?? null;
      if (cacheRead === null) missingCacheRead += 1;
      if (cacheWrite === null) missingCacheWrite += 1;
      row[model] = [input, output, cacheRead, cacheWrite];
      priced += 1;
    }
    if (Object.keys(row).length > 0) prices[provider] = row;
  }

  if (!Array.isArray(mapping)) throw new CatalogExtractError(`${fileName}: mapping table is not an array`);
  const aliases: Record<string, string[]> = {};
  const vendorPrefixes: Record<string, string> = {};
  for (const entry of mapping) {
    if (!isRecord(entry) || typeof entry.modelsDevKey !== "string") {
      throw new CatalogExtractError(`${fileName}: mapping entry has an unexpected shape`);
    }
    const generated = typeof entry.generatedProviderId === "string" ? entry.generatedProviderId : undefined;
    const runtime = typeof entry.runtimeProviderId === "string" ? entry.runtimeProviderId : undefined;
    if (generated === undefined) continue;
    // Later entries win, as in Cline's Object.fromEntries over the same table.
    if (entry.modelsDevKey !== generated) vendorPrefixes[entry.modelsDevKey] = generated;
    else delete vendorPrefixes[entry.modelsDevKey];
    if (runtime !== undefined && runtime !== generated) {
      const list = aliases[runtime] ?? [];
      if (!list.includes(generated)) list.push(generated);
      aliases[runtime] = list;
    }
  }

  // Not in the table but in code: the cline provider's model list is openrouter's plus
  // vercel-ai-gateway's `zai/` models (@cline/llms 0.0.86, checked against its runtime list).
  if (aliases.cline?.includes("openrouter") && isRecord(providers["vercel-ai-gateway"])) {
    aliases.cline.push("vercel-ai-gateway");
  }

  const anthropic = providers.anthropic;
  const derived: Record<string, Record<string, PriceTuple>> = {};
  if (isRecord(anthropic)) {
    const claudeCode = claudeCodeAliases(anthropic, prices.anthropic ?? {});
    if (Object.keys(claudeCode).length > 0) derived["claude-code"] = claudeCode;
  }

  return {
    catalogVersion: catalog.version,
    prices,
    providerAliases: aliases,
    vendorPrefixes,
    derived,
    stats: {
      providers: sortedKeys(providers).length,
      models,
      distinctModelIds: modelIds.size,
      priced,
      unpriced,
      nonstandardPricing,
      missingCacheRead,
      missingCacheWrite,
      stringPrices,
    },
  };
}

function releaseTime(v: Literal | undefined): number {
  if (typeof v !== "string" || v.length === 0) return Number.NEGATIVE_INFINITY;
  const t = Date.parse(v);
  return Number.isNaN(t) ? Number.NEGATIVE_INFINITY : t;
}

/**
 * The claude-code provider offers `opus`, `sonnet` and `haiku`, each a copy of the first
 * anthropic catalog model whose id contains that word, in Cline's catalog order (newest
 * releaseDate first, then id by localeCompare). Mirrors @cline/llms 0.0.86; verified against
 * its runtime `getModelsForProvider("claude-code")`.
 */
export function claudeCodeAliases(
  anthropicModels: { readonly [model: string]: Literal },
  anthropicPrices: Readonly<Record<string, PriceTuple>>,
): Record<string, PriceTuple> {
  const ordered = Object.keys(anthropicModels).sort((a, b) => {
    const ia = anthropicModels[a];
    const ib = anthropicModels[b];
    const ta = releaseTime(isRecord(ia) ? ia.releaseDate : undefined);
    const tb = releaseTime(isRecord(ib) ? ib.releaseDate : undefined);
    if (ta !== tb) return tb - ta;
    return a.localeCompare(b);
  });
  const out: Record<string, PriceTuple> = {};
  for (const word of ["haiku", "opus", "sonnet"]) {
    const source = ordered.find((id) => id.includes(word));
    const price = source === undefined ? undefined : anthropicPrices[source];
    if (price) out[word] = price;
  }
  return out;
}
