import { lookupPrice, type Price } from "../cost/index.ts";
import { priceTableFor } from "../cost/table.ts";
import type { PriceLookup } from "./translate.ts";

/**
 * The exporter's price lookup over the run's price table (`priceTableFor`: Cline's bundled
 * catalog with the user's price file merged over it, the same table `report` uses). Lookups are
 * memoized: a collection asks once per series, the answers never change.
 */
export function buildPriceLookup(pricesFile: string | undefined): PriceLookup {
  const table = priceTableFor(pricesFile);
  const memo = new Map<string, Price | undefined>();
  return (provider, model) => {
    const key = `${provider}\u0000${model}`;
    if (memo.has(key)) return memo.get(key);
    const price = lookupPrice(table, provider, model);
    memo.set(key, price);
    return price;
  };
}
