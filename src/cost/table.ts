import { ConfigError } from "../config/parse.ts";
import { loadPriceFile, PriceFileError, type PriceOverrides } from "./price-file.ts";
import { catalogPriceTable, mergePrices, type PriceTable } from "./prices.ts";

/**
 * The user's price file, read and checked: a bad price file is a configuration error (exit 2)
 * naming file and line. Cheap next to building the table it is merged into (priceTableWith).
 */
export function checkedPriceFile(pricesFile: string): PriceOverrides {
  try {
    return loadPriceFile(pricesFile);
  } catch (e) {
    if (e instanceof PriceFileError) throw new ConfigError(`--prices / CLINE_OTEL_PRICES: ${e.message}`);
    throw e;
  }
}

/** Cline's own catalog with the checked price file (if any) merged over it. */
export function priceTableWith(
  file: { readonly path: string; readonly overrides: PriceOverrides } | undefined,
): PriceTable {
  const base = catalogPriceTable();
  return file === undefined ? base : mergePrices(base, file.overrides, file.path);
}

/**
 * The price table a run uses: Cline's own catalog, with the user's price file (if any)
 * merged over it. A bad price file is a configuration error (exit 2) naming file and line.
 */
export function priceTableFor(pricesFile: string | undefined): PriceTable {
  return priceTableWith(
    pricesFile === undefined ? undefined : { path: pricesFile, overrides: checkedPriceFile(pricesFile) },
  );
}
