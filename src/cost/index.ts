export { clineLlmsCatalog } from "./catalog/cline-llms-0.0.86.generated.ts";
export { type CostInput, costOfEvent, type EventCost } from "./policy.ts";
export {
  formatIssue,
  loadPriceFile,
  PriceFileError,
  type PriceFileIssue,
  type PriceFileResult,
  type PriceOverrides,
  parsePriceFile,
} from "./price-file.ts";
export {
  ANY_PROVIDER,
  buildPriceTable,
  type CostComponents,
  catalogPriceTable,
  computeCost,
  effectiveCachePrices,
  isClineFree,
  lookupPrice,
  mergePrices,
  type Price,
  type PriceMatch,
  type PriceTable,
  type PriceVia,
  pickAnyProvider,
  resolvePrice,
  ZERO_PRICE,
} from "./prices.ts";
