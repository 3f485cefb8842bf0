import { computeCost, type PriceTable, type PriceVia, resolvePrice } from "./prices.ts";

/** What a caller knows about one usage event: who served it and its four components. */
export interface CostInput {
  readonly provider: string;
  readonly model: string;
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
}

/** A known cost carries how its price was found, so estimates from fallbacks can be told apart. */
export type EventCost = { readonly usd: number; readonly via: PriceVia } | { readonly unknown: true };

/** USD of one event from `table`, or unknown when no price applies (never a silent zero). */
export function costOfEvent(table: PriceTable, event: CostInput): EventCost {
  const match = resolvePrice(table, event.provider, event.model);
  if (!match) return { unknown: true };
  return { usd: computeCost(event, match.price), via: match.via };
}
