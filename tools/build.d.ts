// Types for tools/build.js (plain JavaScript: it runs before anything is compiled), for the tests
// and the test suite's global setup that import it.
export declare const ROOT: string;
/** The bundle's entry under the output directory: `cli/main.js`. */
export declare const ENTRY: string;
/** What stays in node_modules (never bundled). */
export declare const EXTERNAL: readonly RegExp[];
export interface Project {
  /** Output name (e.g. "cli/main") -> module, relative to the root. */
  readonly entries: Readonly<Record<string, string>>;
  /** Chunks holding the static import closure of `roots` (with them when `withRoots`). */
  readonly groups: readonly { name: string; roots: readonly string[]; withRoots: boolean }[];
}
/** What `npm run build` bundles. */
export declare const PROJECT: Project;
/** Whether `<root>/dist` is missing or older than a source or a config. */
export declare function buildIsStale(root?: string): boolean;
/** Bundles src/cli/main.ts into `<root>/<outDir>`; resolves to an exit status (0 when built). */
export declare function build(options?: {
  root?: string;
  outDir?: string;
  quiet?: boolean;
  stderr?: { write(text: string): unknown };
  project?: Project;
}): Promise<number>;
