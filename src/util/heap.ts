import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";

/**
 * How far V8 lets the old generation grow past the live heap before the next full GC, in percent.
 * V8's own factor is dynamic (up to 4x the live size when GC is fast next to the program): a
 * backfill or a first export promotes ~100 MB of short-lived rows, documents and export pages
 * that then sit in the heap until the next mark-compact, so the heap peaked at ~4x what is live
 * (`--trace-gc` of `run --once` at 10,000 sessions: 29 MB live, 131 MB before the mark-compact).
 * With 1.3x the live heap the peak follows what is live; the extra mark-compacts are cheap because
 * the live heap of this agent is small (~30 MB). Measured: docs/performance.md ("Peak RSS: V8's heap
 * growth and the ledger's page cache").
 */
export const HEAP_GROWING_PERCENT = 30;

/**
 * The young generation (both semi-spaces) grows no further than this. V8's own maximum is 2 x 16 MB
 * on Node 22 and 2 x 64 MB on Node 24; a young generation that large leaves ~30–45 MB more peak RSS
 * behind a first export (docs/performance.md "The first export's peak RSS": `run --once` of 10,000
 * sessions 211 -> 189 MB on Node 24, 201 -> 173 MB on Node 22, the export alone 224 -> 179 MB), at
 * the same CPU on Node 24 and 2–5 % more on Node 22. Its size is fixed when the heap is created
 * (`--max-semi-space-size` only works on node's command line), but V8 reads
 * `semi_space_growth_factor` at every growth step, so the cap is kept by setting that factor to 1
 * once the space has reached it (`boundYoungGeneration`).
 */
export const YOUNG_GENERATION_CAP_BYTES = 16 * 1024 * 1024;

/** V8's own largest young generation: 2 x 64 MB from V8 13 (Node 24), 2 x 16 MB before (Node 22). */
function ownYoungGenerationMaxBytes(v8Version: string): number {
  return (Number.parseInt(v8Version, 10) >= 13 ? 128 : 32) * 1024 * 1024;
}

/** Whether this V8's young generation may grow past YOUNG_GENERATION_CAP_BYTES (both supported V8s do). */
export function youngGenerationOutgrowsCap(v8Version: string): boolean {
  return ownYoungGenerationMaxBytes(v8Version) > YOUNG_GENERATION_CAP_BYTES;
}

/**
 * The V8 flags this policy sets at start-up. Where the young generation would outgrow its cap,
 * it starts not growing (`boundYoungGeneration` lets it grow up to the cap after discovery):
 * left growing, discovery alone takes it to V8's own maximum before the first check.
 */
export function heapPolicyFlags(v8Version: string = process.versions.v8): readonly string[] {
  const growth = `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
  return youngGenerationOutgrowsCap(v8Version) ? [growth, "--semi-space-growth-factor=1"] : [growth];
}

/**
 * Whether the user chose the heap's growth or young generation on node's command line (`node
 * --heap-growing-percent=0 bin/cline-otel.js run` restores V8's own; NODE_OPTIONS refuses V8 flags).
 */
export function userSetHeapGrowth(execArgv: readonly string[]): boolean {
  return execArgv.some((a) =>
    /^--(heap[-_]growing[-_]percent|max[-_]semi[-_]space[-_]size|semi[-_]space[-_]growth[-_]factor)\b/.test(
      a,
    ),
  );
}

type SpaceStats = () => readonly { readonly space_name: string; readonly space_size: number }[];

/**
 * Lets the young generation grow (V8's factor 2) while it is below YOUNG_GENERATION_CAP_BYTES,
 * and stops it (factor 1) at the cap. Called where this process allocates the most, between
 * units of work (each commit batch of a pass, each export page): one growth step at most
 * happens between two calls. Nothing when the user set the heap flags themselves. Returns the
 * factor set (undefined when none).
 */
export function boundYoungGeneration(
  execArgv: readonly string[] = process.execArgv,
  stats: SpaceStats = getHeapSpaceStatistics,
  setFlags: (flag: string) => void = setFlagsFromString,
): 1 | 2 | undefined {
  if (userSetHeapGrowth(execArgv)) return undefined;
  const young = stats().find((s) => s.space_name === "new_space");
  const factor = young !== undefined && young.space_size >= YOUNG_GENERATION_CAP_BYTES ? 1 : 2;
  setFlags(`--semi-space-growth-factor=${factor}`);
  return factor;
}

/**
 * Applies the policy to this process unless the user set the flag themselves. V8 reads
 * `heap_growing_percent` at every full GC (heap-controller.cc GrowingFactor), so setting it
 * after start-up takes effect; heap *sizes* (semi-space, old space) do not, they are fixed when
 * the heap is created. Returns the flags applied (none when the user's own win).
 */
export function applyHeapPolicy(
  execArgv: readonly string[] = process.execArgv,
  setFlags: (flag: string) => void = setFlagsFromString,
): readonly string[] {
  if (userSetHeapGrowth(execArgv)) return [];
  const flags = heapPolicyFlags();
  for (const f of flags) setFlags(f);
  return flags;
}
