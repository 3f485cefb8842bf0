import { lookupPrice, type Price, type PriceTable } from "../cost/index.ts";
import { checkedPriceFile, priceTableWith } from "../cost/table.ts";
import type { PriceLookup } from "./translate.ts";

/**
 * The exporter's price lookup over the run's price table (Cline's bundled catalog with the
 * user's price file merged over it, the same table `report` uses). The price file is read and
 * checked now, so a bad one stops `run` before any work (exit 2); the table (~30 ms to build
 * from the catalog) at the first lookup, so a collection with nothing due builds none. Lookups
 * are memoized: a collection asks once per series, the answers never change.
 */
export function buildPriceLookup(pricesFile: string | undefined): PriceLookup {
  const file =
    pricesFile === undefined ? undefined : { path: pricesFile, overrides: checkedPriceFile(pricesFile) };
  let table: PriceTable | undefined;
  const memo = new Map<string, Price | undefined>();
  return (provider, model) => {
    const key = `${provider}\u0000${model}`;
    if (memo.has(key)) return memo.get(key);
    table ??= priceTableWith(file);
    const price = lookupPrice(table, provider, model);
    memo.set(key, price);
    return price;
  };
}
