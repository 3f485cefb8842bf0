import { ConfigError } from "../config/config.ts";
import { loadPriceFile, PriceFileError } from "./price-file.ts";
import { catalogPriceTable, mergePrices, type PriceTable } from "./prices.ts";

/**
 * The price table a run uses: Cline's own catalog, with the user's price file (if any)
 * merged over it. A bad price file is a configuration error (exit 2) naming file and line.
 */
export function priceTableFor(pricesFile: string | undefined): PriceTable {
  const base = catalogPriceTable();
  if (pricesFile === undefined) return base;
  try {
    return mergePrices(base, loadPriceFile(pricesFile), pricesFile);
  } catch (e) {
    if (e instanceof PriceFileError) throw new ConfigError(`--prices / CLINE_OTEL_PRICES: ${e.message}`);
    throw e;
  }
}
