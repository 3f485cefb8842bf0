import { join, resolve } from "node:path";
import { type Env, envStr } from "../../../util/env.ts";
import { keyPart } from "../dedup.ts";
import type { ClinePaths, ResolvedPath } from "../paths.ts";

/**
 * Where Cline writes provider-request captures (docs/cline-format.md §7.1, cline@3.0.65):
 *   $CLINE_CAPTURE_DIR, else $CLINE_DATA_DIR/provider-request-captures ONLY when that variable
 *   is set (with neither, Cline writes nothing, even though its data dir defaults to ~/.cline/data).
 * `--data-dir X` makes Cline set CLINE_DATA_DIR=X itself, so such captures land in
 * X/provider-request-captures, a place our environment cannot see: hence the resolved data dir
 * is looked at too. Our own flag / variable names a directory Cline was pointed at elsewhere.
 */
export const CAPTURE_ENV = {
  captureDir: "CLINE_CAPTURE_DIR",
  dataDir: "CLINE_DATA_DIR",
  /** Ours: a capture dir Cline was given through an environment we do not share. */
  otelCaptureDir: "CLINE_OTEL_CAPTURE_DIR",
} as const;

export const CAPTURE_SUBDIR = "provider-request-captures";
export const CAPTURE_SUFFIX = ".provider-request.json";

export interface CaptureDirFlags {
  /** `--capture-dir`. */
  readonly captureDir?: string | undefined;
}

/**
 * Every directory that may hold capture files, in this order, duplicates (same path) removed:
 *   1. `--capture-dir`, else $CLINE_OTEL_CAPTURE_DIR (ours);
 *   2. Cline's own rule: $CLINE_CAPTURE_DIR, else $CLINE_DATA_DIR/provider-request-captures;
 *   3. <resolved data dir>/provider-request-captures (`--data-dir` users).
 * None of them needs to exist; discovery looks at the ones that do (symlinks collapsed there).
 */
export function resolveCaptureDirs(
  flags: CaptureDirFlags,
  env: Env,
  cline: Pick<ClinePaths, "data">,
  cwd: string = process.cwd(),
): ResolvedPath[] {
  const out: ResolvedPath[] = [];
  const add = (p: ResolvedPath): void => {
    if (!out.some((q) => q.path === p.path)) out.push(Object.freeze(p));
  };
  const ours = envStr(env, CAPTURE_ENV.otelCaptureDir);
  if (flags.captureDir !== undefined) {
    add({ path: resolve(cwd, flags.captureDir), origin: "flag", via: "--capture-dir" });
  } else if (ours !== undefined) {
    add({ path: resolve(cwd, ours), origin: "env", via: CAPTURE_ENV.otelCaptureDir });
  }
  const clineCapture = envStr(env, CAPTURE_ENV.captureDir);
  const clineData = envStr(env, CAPTURE_ENV.dataDir);
  if (clineCapture !== undefined) {
    add({ path: resolve(cwd, clineCapture), origin: "env", via: CAPTURE_ENV.captureDir });
  } else if (clineData !== undefined) {
    add({
      path: join(resolve(cwd, clineData), CAPTURE_SUBDIR),
      origin: "env",
      via: `<${CAPTURE_ENV.dataDir}>/${CAPTURE_SUBDIR}`,
    });
  }
  const data = cline.data;
  const rule = data.origin === "default" ? data.via : `<${data.via}>`;
  add({ path: join(data.path, CAPTURE_SUBDIR), origin: data.origin, via: `${rule}/${CAPTURE_SUBDIR}` });
  return out;
}

export interface CaptureFileName {
  readonly captureId: string;
  readonly stage: string;
  /** Cline's per-process counter per (captureId, stage). */
  readonly seq: number;
}

/** `<captureId>.<stage>.<n>.provider-request.json`; the captureId may itself contain dots. */
const NAME = /^(.+)\.([a-z][a-z0-9_]{0,63})\.([1-9][0-9]{0,14})$/;

/**
 * Parses a capture file name, or undefined for anything else: the `*.tmp` files Cline renames
 * into place, other files, names whose parts are not what Cline writes.
 */
export function parseCaptureFileName(name: string): CaptureFileName | undefined {
  if (!name.endsWith(CAPTURE_SUFFIX)) return undefined;
  const m = NAME.exec(name.slice(0, -CAPTURE_SUFFIX.length));
  if (m === null) return undefined;
  const seq = Number(m[3]);
  if (!Number.isSafeInteger(seq)) return undefined;
  return { captureId: m[1] as string, stage: m[2] as string, seq };
}

/** `cline-capture|<captureId>|<stage>|<n>`, escaped so no two names spell the same key. */
export function captureDedupKey(name: CaptureFileName): string {
  return `cline-capture|${keyPart(name.captureId)}|${keyPart(name.stage)}|${name.seq}`;
}
