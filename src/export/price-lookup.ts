import { ConfigError } from "../config/config.ts";
import {
  catalogPriceTable,
  loadPriceFile,
  lookupPrice,
  mergePrices,
  type Price,
  PriceFileError,
} from "../cost/index.ts";
import type { PriceLookup } from "./translate.ts";

/**
 * The exporter's price lookup: Cline's bundled catalog, with the user's price file (--prices,
 * CLINE_OTEL_PRICES) merged over it. A bad price file is a configuration error (exit 2).
 * Lookups are memoized: a collection asks once per series, the answers never change.
 */
export function buildPriceLookup(pricesFile: string | undefined): PriceLookup {
  let table = catalogPriceTable();
  if (pricesFile !== undefined) {
    try {
      table = mergePrices(table, loadPriceFile(pricesFile), pricesFile);
    } catch (e) {
      if (e instanceof PriceFileError) throw new ConfigError(e.message);
      throw e;
    }
  }
  const memo = new Map<string, Price | undefined>();
  return (provider, model) => {
    const key = `${provider}\u0000${model}`;
    if (memo.has(key)) return memo.get(key);
    const price = lookupPrice(table, provider, model);
    memo.set(key, price);
    return price;
  };
}
