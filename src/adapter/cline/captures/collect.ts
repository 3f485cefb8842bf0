/**
 * The captures surface of the Cline adapter: one source per provider-request capture file,
 * read once (a capture is immutable once Cline renamed it into place), its allow-listed summary
 * numbers committed with its checkpoint. `withCaptures` puts this surface next to the messages
 * surface behind one Adapter, so the collector pass and loop take both unchanged.
 */
import { statSync } from "node:fs";
import { basename } from "node:path";
import { ScanError, type ScanFileOptions, scanFile } from "../../../scan/scanner.ts";
import { isWrongType } from "../../../scan/schema.ts";
import { checkpointOf, readWhole, statFile } from "../../fingerprint.ts";
import type { ListingStore } from "../../listings.ts";
import type { Adapter, Observation, Problem, Source, SourceCheckpoint } from "../../types.ts";
import { type ClineAdapterOptions, createClineAdapter } from "../adapter.ts";
import { persistedIndexRead } from "../index-cache.ts";
import { type CachedIndexReader, cachedIndexReader, type IndexReader } from "../index-db.ts";
import type { ClinePaths, ResolvedPath } from "../paths.ts";
import { clineWatchPlan } from "../watch-plan.ts";
import { createSessionResolver, listCaptureFiles, type SessionResolver } from "./discover.ts";
import { parseCaptureRecord } from "./parser.ts";
import { parseCaptureFileName } from "./paths.ts";
import { CLINE_CAPTURES_ADAPTER_ID, captureRecordSchema } from "./schema.ts";

export interface CapturesAdapterOptions {
  /** Candidate capture dirs (resolveCaptureDirs); the ones that exist are read each pass. */
  readonly dirs: readonly ResolvedPath[];
  /** Cline's paths: the index and sessions tree give each capture its project and agent. */
  readonly cline: Pick<ClinePaths, "sessions" | "db">;
  /** Reads `sessions.db`: the messages surface's reader, so the index is read once per change. */
  readonly readIndex?: IndexReader;
}

const GONE: Omit<SourceCheckpoint, "path"> = { size: 0, mtimeNs: "0", ino: 0, dev: 0 };

function failed(source: Source, code: string, detail: string): Observation {
  return { status: "failed", source, problem: { path: source.path, code, detail } };
}

/**
 * A file that is no longer there is not a failure: Cline's 24-hour cleanup deletes captures at
 * any time. It is reported (counted) once and checkpointed so the pass moves on; the next
 * discovery prunes that checkpoint with the others of vanished files.
 */
function vanished(source: Source): Observation {
  return {
    status: "read",
    source,
    checkpoint: { path: source.path, ...GONE },
    events: [],
    toolCalls: [],
    captures: [],
    problems: [
      {
        path: source.path,
        code: "capture-vanished",
        detail: "deleted between discovery and read (Cline's capture cleanup); nothing to collect",
      },
    ],
  };
}

function isEnoent(e: unknown): boolean {
  return (
    (e as NodeJS.ErrnoException).code === "ENOENT" ||
    (e instanceof ScanError && e.code === "io" && /ENOENT/.test(e.message))
  );
}

/** Summary captures are a few KB; a full one with a large payload can be hundreds of MB. */
const SMALL_CAPTURE_BYTES = 1024 * 1024;

/**
 * Small files are scanned with one small buffer and `indexOf` (setting up the 2 x 2 MiB wasm
 * arena costs ~10x the scan of a 2 KB capture); large ones with the default chunked wasm skipper.
 * An unknown size (stat failed) takes the default; the scan itself then reports the problem.
 */
export function scanOptionsFor(path: string): ScanFileOptions {
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    // The scan that follows meets the same error and classifies it (vanished, unreadable).
    return {};
  }
  return size <= SMALL_CAPTURE_BYTES ? { chunkBytes: 64 * 1024, skipper: "indexOf" } : {};
}

/** Reads one capture file in full: the allow-listed fields only, whatever its size. */
export async function collectCapture(source: Source, resolver: SessionResolver): Promise<Observation> {
  const name = parseCaptureFileName(basename(source.path));
  if (name === undefined) return failed(source, "capture-name-unparsed", "not a capture file name");
  let result: Awaited<ReturnType<typeof scanFile<typeof captureRecordSchema>>>;
  try {
    result = await scanFile(source.path, captureRecordSchema, scanOptionsFor(source.path));
  } catch (e) {
    if (isEnoent(e)) return vanished(source);
    if (!(e instanceof ScanError)) throw e;
    if (e.code === "io") return failed(source, "unreadable", e.message);
    // Renamed into place whole, so a malformed capture stays malformed: reported once, not retried.
    let checkpoint: SourceCheckpoint;
    try {
      checkpoint = checkpointOf(source.path, statFile(source.path));
    } catch (se) {
      if (isEnoent(se)) return vanished(source);
      return failed(source, "unreadable", `stat failed: ${(se as NodeJS.ErrnoException).code}`);
    }
    return {
      status: "read",
      source,
      checkpoint,
      events: [],
      toolCalls: [],
      captures: [],
      problems: [{ path: source.path, code: "malformed-capture", detail: e.message }],
    };
  }
  if (!readWhole(result)) {
    return failed(source, "changed-during-read", "the capture file changed while being read");
  }
  const doc = result.value;
  const corr =
    doc !== undefined && !isWrongType(doc) && doc.correlation !== undefined && !isWrongType(doc.correlation)
      ? doc.correlation
      : undefined;
  const sessionId = typeof corr?.sessionId === "string" ? corr.sessionId : "";
  const agentId = typeof corr?.agentId === "string" ? corr.agentId : "";
  const facts = await resolver.facts(sessionId, agentId);
  const parsed = parseCaptureRecord(doc, name, source.path, () => facts);
  return {
    status: "read",
    source,
    checkpoint: checkpointOf(source.path, result.statBefore),
    events: [],
    toolCalls: [],
    captures: parsed.capture === undefined ? [] : [parsed.capture],
    problems: parsed.problems,
  };
}

/**
 * The captures surface as an Adapter. Each discovery lists the capture dirs (the session
 * index that joins captures to their project is read when a pass first reads one), and prunes the checkpoints of files
 * Cline has deleted. A capture with a checkpoint is never opened again.
 */
export function createClineCapturesAdapter(opts: CapturesAdapterOptions): Adapter {
  const readIndex = opts.readIndex ?? cachedIndexReader();
  // One per pass, shared by the captures read ahead together.
  let resolver: Promise<SessionResolver> | undefined;
  let resolverProblems: Problem[] = [];
  const freshResolver = async (): Promise<SessionResolver> => {
    const problems: Problem[] = [];
    resolverProblems = problems;
    const index = await readIndex(opts.cline.db.path);
    return createSessionResolver(opts.cline.sessions.path, index, problems);
  };
  const collect = async (source: Source): Promise<Observation> => {
    resolver ??= freshResolver();
    const r = await resolver;
    const before = resolverProblems.length;
    const obs = await collectCapture(source, r);
    // Sidecar problems met while joining this capture travel with it (counted, never lost).
    const extra = resolverProblems.slice(before);
    if (extra.length === 0 || obs.status !== "read") return obs;
    return { ...obs, problems: [...obs.problems, ...extra] };
  };
  return {
    id: CLINE_CAPTURES_ADAPTER_ID,
    async discover() {
      const listing = listCaptureFiles(opts.dirs);
      // The session join is built when a capture is first read in this pass, not before: an
      // idle pass (or a tree without captures) reads no index for it.
      resolver = undefined;
      // Every capture file of the readable dirs is listed: the pass drops the checkpoints of
      // the files Cline has deleted (its 24-hour cleanup), except under dirs it could not list.
      return {
        sources: listing.sources,
        problems: listing.problems,
        listings: [{ adapterId: CLINE_CAPTURES_ADAPTER_ID, unlisted: listing.incomplete }],
      };
    },
    async collectIncremental(source, checkpoint) {
      if (checkpoint !== undefined) return { status: "unchanged", source, checkpoint };
      return collect(source);
    },
    // A capture is written once: one with a checkpoint is never opened again.
    unchangedNow: () => true,
  };
}

/**
 * Both surfaces behind one Adapter: the messages documents first, then the capture files.
 * Sources are routed back to the surface that discovered them by their adapterId.
 */
export function withCaptures(messages: Adapter, captures: Adapter): Adapter {
  const pick = (s: Source): Adapter => (s.adapterId === captures.id ? captures : messages);
  return {
    id: messages.id,
    async discover(known) {
      const a = await messages.discover(known);
      const b = await captures.discover();
      return {
        sources: [...a.sources, ...b.sources],
        problems: [...a.problems, ...b.problems],
        listings: [...(a.listings ?? []), ...(b.listings ?? [])],
        // Capture files are always listed: only the messages surface counts sources unlisted.
        ...(a.unchangedUnlisted === undefined ? {} : { unchangedUnlisted: a.unchangedUnlisted }),
      };
    },
    collectIncremental: (s, cp) => pick(s).collectIncremental(s, cp),
    unchangedNow: (s, cp) => pick(s).unchangedNow?.(s, cp) ?? false,
  };
}

/**
 * What `report` and `run` collect: the messages documents of Cline's sessions tree and index,
 * plus the capture files of every capture dir that exists (none is the normal case).
 */
export function createClineSurfaces(
  cline: ClinePaths,
  captureDirs: readonly ResolvedPath[],
  /** Where discovery's listings persist (the ledger's; see createClineAdapter). */
  listings?: ListingStore,
  opts: ClineAdapterOptions = {},
  // With a store, the index read is remembered across processes too (index-cache.ts).
  readIndex: CachedIndexReader = cachedIndexReader(listings ? persistedIndexRead(listings) : undefined),
): Adapter {
  const both = withCaptures(
    createClineAdapter(cline, readIndex, listings, Date.now, opts),
    createClineCapturesAdapter({
      dirs: captureDirs,
      cline,
      readIndex,
    }),
  );
  return {
    ...both,
    // The index rows (~300 bytes a session) are not kept once both discoveries have them: not
    // through a pass, nor by a daemon between sweeps (a held discovery compares the index's stat
    // keys, held-discovery.ts). A capture read later in the pass reads the index again.
    discover: async (known) => {
      try {
        return await both.discover(known);
      } finally {
        readIndex.forget();
      }
    },
    watchPlans: Object.freeze([clineWatchPlan(cline, captureDirs)]),
  };
}
