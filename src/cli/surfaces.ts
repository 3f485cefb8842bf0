/**
 * What `run` and `report` collect: every adapter, combined for the generic collector. Cline CLI
 * 3.x's sessions and captures (src/adapter/cline/) and the task format of the legacy core
 * (src/adapter/cline-tasks/): their keys never meet (docs/cline-format.md §15.8, trap 9).
 */
import type { ListingStore } from "../adapter/listings.ts";
import type { Adapter } from "../adapter/types.ts";
import type { LocalConfig } from "../config/config.ts";

export interface SurfaceOptions {
  /** The process runs one pass (`run --once`, `report`): see ClineAdapterOptions.onePass. */
  readonly onePass?: boolean;
}

export async function loadSurfaces(): Promise<
  (config: LocalConfig, listings?: ListingStore, opts?: SurfaceOptions) => Adapter
> {
  const [{ createClineSurfaces }, { createClineTasksAdapter }, { combineAdapters }] = await Promise.all([
    import("../adapter/cline/captures/collect.ts"),
    import("../adapter/cline-tasks/adapter.ts"),
    import("../adapter/combine.ts"),
  ]);
  return (config, listings, opts = {}) =>
    combineAdapters("cline", [
      createClineSurfaces(config.cline, config.captureDirs, listings, opts),
      ...(config.taskRoots.length > 0 ? [createClineTasksAdapter(config.taskRoots)] : []),
    ]);
}
