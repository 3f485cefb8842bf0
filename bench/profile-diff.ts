/**
 * Where two builds' CPU differs, by function: `npx tsx bench/profile-diff.ts <dir A> <dir B> [--top N]
 * [--under NAME]` (not part of npm test). Each dir holds `.cpuprofile`s of one build running the same
 * command (`node --cpu-prof --cpu-prof-dir=<dir> …`, a few runs each); prints, per function, the mean
 * inclusive main-thread ms per profile in A and in B and B - A, largest first. With `--under NAME`,
 * only time spent below a frame named NAME, by its direct callees (what `commitAll` or `read` is made
 * of). Names are `function file`, a bundle chunk's content hash stripped (`ledger-Ab12Cd34.js` is
 * `ledger.js`), so two builds' chunks compare. Written here: V8's profile format is a node tree with
 * samples, and no package on this machine sums it inclusively by name (docs/performance.md, "Issue
 * 29's cold tasks row by profile").
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

/** The parts of a V8 `.cpuprofile` read here. */
export interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: { readonly functionName: string; readonly url: string };
    readonly children?: readonly number[];
  }[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** A frame's name: `function file`, the file's chunk hash (`-<8 chars>.js`) stripped. */
export function frameName(f: { readonly functionName: string; readonly url: string }): string {
  const file = (f.url.split("/").pop() ?? "").replace(/-[A-Za-z0-9_-]{8}\.js$/, ".js");
  return `${f.functionName || "(anon)"} ${file}`.trimEnd();
}

/**
 * Inclusive ms per frame name (a name counted once per sample however often it recurs), or, with
 * `under`, ms per direct callee of the outermost frame named `under` (`(self)`: in it). The idle
 * samples are left out. A sample's time is the delta to the next one (V8's own convention).
 */
export function inclusiveMs(p: CpuProfile, under?: string): Map<string, number> {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const out = new Map<string, number>();
  const add = (k: string, ms: number): void => {
    out.set(k, (out.get(k) ?? 0) + ms);
  };
  for (let i = 0; i < p.samples.length; i++) {
    const leaf = byId.get(p.samples[i] as number);
    if (leaf === undefined || leaf.callFrame.functionName === "(idle)") continue;
    const ms = (p.timeDeltas[i + 1] ?? 0) / 1000;
    const chain: string[] = [];
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      const n = byId.get(id);
      if (n !== undefined) chain.push(frameName(n.callFrame));
    }
    chain.reverse(); // root first
    if (under === undefined) {
      for (const k of new Set(chain)) add(k, ms);
      continue;
    }
    const at = chain.findIndex((k) => k.split(" ")[0] === under);
    if (at >= 0) add(chain[at + 1] ?? "(self)", ms);
  }
  return out;
}

/** The mean of `inclusiveMs` over several profiles of one build. */
export function meanMs(profiles: readonly CpuProfile[], under?: string): Map<string, number> {
  const sum = new Map<string, number>();
  for (const p of profiles)
    for (const [k, v] of inclusiveMs(p, under)) sum.set(k, (sum.get(k) ?? 0) + v / profiles.length);
  return sum;
}

/** Rows `[name, a, b]` of every name in either, by the larger of |b - a| first. */
export function diffRows(
  a: ReadonlyMap<string, number>,
  b: ReadonlyMap<string, number>,
): [string, number, number][] {
  const names = new Set([...a.keys(), ...b.keys()]);
  return [...names]
    .map((k): [string, number, number] => [k, a.get(k) ?? 0, b.get(k) ?? 0])
    .sort((x, y) => Math.abs(y[2] - y[1]) - Math.abs(x[2] - x[1]));
}

function load(dir: string): CpuProfile[] {
  const files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));
  if (files.length === 0) throw new Error(`${dir}: no .cpuprofile (node --cpu-prof --cpu-prof-dir=${dir} …)`);
  return files.map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as CpuProfile);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const args = process.argv.slice(2);
  const opt = (name: string): string | undefined => {
    const i = args.indexOf(name);
    return i >= 0 ? args.splice(i, 2)[1] : undefined;
  };
  const top = Number(opt("--top") ?? 40);
  const under = opt("--under");
  const [dirA, dirB] = args;
  if (dirA === undefined || dirB === undefined) {
    console.error("usage: npx tsx bench/profile-diff.ts <dir A> <dir B> [--top N] [--under NAME]");
    process.exit(2);
  }
  const a = load(dirA);
  const b = load(dirB);
  console.log(`A ${dirA}: ${a.length} profiles; B ${dirB}: ${b.length}; mean main-thread ms per profile`);
  console.log(`${"B - A".padStart(8)} ${"A".padStart(8)} ${"B".padStart(8)}  function`);
  for (const [k, x, y] of diffRows(meanMs(a, under), meanMs(b, under)).slice(0, top))
    console.log(
      `${(y - x).toFixed(1).padStart(8)} ${x.toFixed(1).padStart(8)} ${y.toFixed(1).padStart(8)}  ${k}`,
    );
}
