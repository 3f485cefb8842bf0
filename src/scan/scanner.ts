/**
 * Allow-list scanning of JSON files and buffers. See machine.ts for the engine and its
 * validation policy; this file owns the file handle, the chunked reads and the stats.
 */
import { type BigIntStats, closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { SkipArena, wasmUnavailableReason } from "./arena.ts";
import { ScanError } from "./errors.ts";
import { ScanMachine } from "./machine.ts";
import type { Scanned, Schema } from "./schema.ts";

export { ScanError, type ScanErrorCode } from "./errors.ts";

export interface FileStat {
  readonly size: number;
  readonly mtimeNs: bigint;
  readonly ino: number;
  readonly dev: number;
}

export interface ScanFileResult<T> {
  readonly value: T;
  readonly bytesRead: number;
  readonly statBefore: FileStat;
  readonly statAfter: FileStat;
}

/**
 * How strings are crossed: "wasm" = SIMD skipper over chunks in wasm memory (see skip.wat),
 * "indexOf" = `Buffer#indexOf` per quote. "auto" = wasm when available (for scanBuffer: and
 * the buffer is at least 64 KiB, below which copying it into the arena is not worth it).
 * Both give identical results; the choice exists for speed and so tests can cover both.
 */
export type Skipper = "auto" | "wasm" | "indexOf";

export interface ScanFileOptions {
  /** Read size; the scanner holds two such buffers (one being scanned, one being read). Default 2 MiB. */
  readonly chunkBytes?: number;
  readonly skipper?: Skipper;
  /**
   * `raw` values of a file read whole (the small-file path, no wasm arena) may be views of the
   * buffer it was read into instead of copies (MachineOptions.views): for a reader that lets go of
   * the scanned value with the document. Other paths reuse their chunks and copy as always.
   */
  readonly views?: boolean;
}

export interface ScanBufferOptions {
  readonly skipper?: Skipper;
  /** `raw` values may be views of `buf` (one chunk, no arena): the caller keeps it unchanged. */
  readonly views?: boolean;
}

export const DEFAULT_CHUNK_BYTES = 2 * 1024 * 1024;
const BUFFER_WASM_MIN_BYTES = 64 * 1024;
const BUFFER_COPY_CHUNK = 1024 * 1024;

/** Below this size a file is scanned with plain buffers and indexOf: a wasm arena costs more than it saves. */
export const SMALL_FILE_BYTES = 1024 * 1024;

/**
 * Buffers sized to the file, and the wasm skipper only where it pays: a pass over
 * thousands of small documents must not allocate two 2 MiB wasm slots per document
 * (measured: 18.6 s vs 7.1 s over 12,900 documents).
 */
export function chunkPlan(
  fileSize: number,
  chunkBytes: number,
  skipper: Skipper,
): { chunkBytes: number; skipper: Skipper } {
  // +1 so a file that fits is read whole and the next read sees EOF.
  const fitted = Math.max(1, Math.min(chunkBytes, fileSize + 1));
  if (skipper === "auto" && fileSize < SMALL_FILE_BYTES) return { chunkBytes: fitted, skipper: "indexOf" };
  return { chunkBytes: fitted, skipper };
}

function arenaFor(skipper: Skipper, slotBytes: number, slots: number): SkipArena | null {
  if (skipper === "indexOf") return null;
  const arena = SkipArena.create(slotBytes, slots);
  if (arena === null && skipper === "wasm") {
    throw new Error(`scan: the wasm skipper is unavailable (${wasmUnavailableReason || "arena too large"})`);
  }
  return arena;
}

/** A bigint stat as the scan's fingerprint (size, ns mtime, inode, device). */
export function toFileStat(s: BigIntStats): FileStat {
  return { size: Number(s.size), mtimeNs: s.mtimeNs, ino: Number(s.ino), dev: Number(s.dev) };
}

function ioError(path: string, offset: number, err: unknown): ScanError {
  const e = err as NodeJS.ErrnoException;
  const detail = typeof e?.code === "string" ? `${e.code}: ${e.message}` : String(err);
  return new ScanError("io", offset, path, detail, { cause: err });
}

async function statOf(fh: FileHandle, path: string, offset: number): Promise<BigIntStats> {
  try {
    return await fh.stat({ bigint: true });
  } catch (err) {
    throw ioError(path, offset, err);
  }
}

/**
 * Files up to this size are read with synchronous calls, whole: five thread-pool round trips
 * (open, fstat, read, fstat, close) cost more than reading a small document, and a history is
 * mostly small documents (measured: 12,900 of them, 1.1 s of async overhead). The event loop is
 * held for at most one such read (~50 us from the page cache).
 */
export const SYNC_READ_MAX_BYTES = 256 * 1024;

/**
 * Scans a file read-only, in chunks, decoding only what `schema` allow-lists.
 * Returns the stats from before and after the read; deciding whether a rewrite raced
 * the read is the caller's job.
 */
export async function scanFile<S extends Schema>(
  path: string,
  schema: S,
  opts: ScanFileOptions = {},
): Promise<ScanFileResult<Scanned<S>>> {
  const chunkBytes = opts.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  if (!Number.isSafeInteger(chunkBytes) || chunkBytes < 1) {
    throw new RangeError(`scanFile(): chunkBytes must be a positive integer, got ${chunkBytes}`);
  }
  // A chunk size below the file's asks for chunked reads (tests of chunk boundaries): async path.
  if (chunkBytes >= SYNC_READ_MAX_BYTES) {
    const small = scanSmallFileSync(path, schema, opts.skipper ?? "auto", opts.views === true);
    if (small !== undefined) return small;
  }
  let fh: FileHandle;
  try {
    // O_NONBLOCK only so that opening a FIFO cannot hang before fstat rejects it;
    // it changes nothing for regular files.
    fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw ioError(path, 0, err);
  }

  let inflight: Promise<number> | null = null;
  let result: ScanFileResult<Scanned<S>>;
  try {
    const before = await statOf(fh, path, 0);
    if (!before.isFile()) throw new ScanError("not-a-file", 0, path, "not a regular file");
    if (before.size === 0n) throw new ScanError("empty", 0, path, "file is empty");

    const plan = chunkPlan(Number(before.size), chunkBytes, opts.skipper ?? "auto");
    const arena = arenaFor(plan.skipper, plan.chunkBytes, 2);
    const machine = new ScanMachine(schema, path, arena?.skip ?? null);
    const bufs =
      arena === null
        ? ([Buffer.allocUnsafe(plan.chunkBytes), Buffer.allocUnsafe(plan.chunkBytes)] as const)
        : ([arena.slot(0), arena.slot(1)] as const);
    const addrs = arena === null ? ([-1, -1] as const) : ([arena.addr(0), arena.addr(1)] as const);
    const readInto = (buf: Buffer, pos: number): Promise<number> =>
      fh.read(buf, 0, buf.length, pos).then(
        (r) => r.bytesRead,
        (err: unknown) => {
          throw ioError(path, pos, err);
        },
      );

    // Double buffering: the next chunk is read (on the libuv pool) while this one is scanned.
    let pos = 0;
    let cur = 0;
    inflight = readInto(bufs[0], 0);
    for (;;) {
      const got: number = await inflight;
      inflight = null;
      if (got === 0) break;
      pos += got;
      const buf = bufs[cur] as Buffer;
      const addr = addrs[cur] as number;
      cur ^= 1;
      inflight = readInto(bufs[cur] as Buffer, pos);
      machine.feed(got === buf.length ? buf : buf.subarray(0, got), addr);
    }
    const value = machine.end() as Scanned<S>;
    const after = await statOf(fh, path, pos);
    result = { value, bytesRead: pos, statBefore: toFileStat(before), statAfter: toFileStat(after) };
  } catch (err) {
    // A prefetch may still be running when the scan fails. Wait for it so the handle is
    // not closed under it; its own outcome is moot (the read it feeds was abandoned).
    if (inflight !== null) await inflight.then(noop, noop);
    await closeQuietlyAfter(fh, err);
    throw err;
  }
  try {
    await fh.close();
  } catch (err) {
    throw ioError(path, result.bytesRead, err);
  }
  return result;
}

/**
 * The small-file path of scanFile: the same checks and stats, synchronously, the file read
 * whole into one buffer. Undefined when the file is larger than SYNC_READ_MAX_BYTES (then
 * the chunked async path reads it).
 */
function scanSmallFileSync<S extends Schema>(
  path: string,
  schema: S,
  skipper: Skipper,
  views: boolean,
): ScanFileResult<Scanned<S>> | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw ioError(path, 0, err);
  }
  let result: ScanFileResult<Scanned<S>> | undefined;
  try {
    result = readSmallFd(fd, path, schema, skipper, views);
  } catch (err) {
    try {
      closeSync(fd);
    } catch (closeErr) {
      // The primary error stands; the close error travels with it, as in closeQuietlyAfter.
      if (err instanceof Error && err.cause === undefined) {
        Object.defineProperty(err, "cause", { value: closeErr, enumerable: false, configurable: true });
      }
    }
    throw err;
  }
  try {
    closeSync(fd);
  } catch (err) {
    throw ioError(path, result?.bytesRead ?? 0, err);
  }
  return result;
}

function readSmallFd<S extends Schema>(
  fd: number,
  path: string,
  schema: S,
  skipper: Skipper,
  views: boolean,
): ScanFileResult<Scanned<S>> | undefined {
  const stat = (offset: number): BigIntStats => {
    try {
      return fstatSync(fd, { bigint: true });
    } catch (err) {
      throw ioError(path, offset, err);
    }
  };
  const before = stat(0);
  if (!before.isFile()) throw new ScanError("not-a-file", 0, path, "not a regular file");
  if (before.size === 0n) throw new ScanError("empty", 0, path, "file is empty");
  if (before.size > BigInt(SYNC_READ_MAX_BYTES)) return undefined;
  // +1: a file that grew since the fstat is read up to that much more, then seen as changed.
  const buf = Buffer.allocUnsafe(Number(before.size) + 1);
  let pos = 0;
  while (pos < buf.length) {
    let got: number;
    try {
      got = readSync(fd, buf, pos, buf.length - pos, pos);
    } catch (err) {
      throw ioError(path, pos, err);
    }
    if (got === 0) break;
    pos += got;
  }
  const plan = chunkPlan(Number(before.size), buf.length, skipper);
  const arena = arenaFor(plan.skipper, buf.length, 1);
  // The buffer is this read's own: views of it live as long as the value (an arena slot is reused).
  const machine = new ScanMachine(schema, path, arena?.skip ?? null, { views: views && arena === null });
  if (pos > 0) {
    if (arena === null) machine.feed(buf.subarray(0, pos));
    else {
      const slot = arena.slot(0);
      slot.set(buf.subarray(0, pos));
      machine.feed(slot.subarray(0, pos), arena.addr(0));
    }
  }
  const value = machine.end() as Scanned<S>;
  const after = stat(pos);
  return { value, bytesRead: pos, statBefore: toFileStat(before), statAfter: toFileStat(after) };
}

function noop(): void {}

/** Closes after a failure; a close error then is attached to the primary error, not thrown over it. */
async function closeQuietlyAfter(fh: FileHandle, primary: unknown): Promise<void> {
  try {
    await fh.close();
  } catch (closeErr) {
    if (primary instanceof Error && primary.cause === undefined) {
      Object.defineProperty(primary, "cause", { value: closeErr, enumerable: false, configurable: true });
    }
  }
}

/**
 * Scans an in-memory document with the same engine: as one chunk (indexOf skipper), or
 * copied through a 1 MiB wasm slot piece by piece (wasm skipper).
 */
export function scanBuffer<S extends Schema>(
  buf: Uint8Array,
  schema: S,
  opts: ScanBufferOptions = {},
): Scanned<S> {
  const skipper = opts.skipper ?? "auto";
  const useArena = skipper === "wasm" || (skipper === "auto" && buf.length >= BUFFER_WASM_MIN_BYTES);
  const arena = useArena ? arenaFor(skipper, Math.max(1, Math.min(buf.length, BUFFER_COPY_CHUNK)), 1) : null;
  const machine = new ScanMachine(schema, "", arena?.skip ?? null, {
    views: opts.views === true && arena === null,
  });
  if (arena === null) {
    if (buf.length > 0) {
      machine.feed(Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength));
    }
  } else {
    const slot = arena.slot(0);
    const addr = arena.addr(0);
    for (let pos = 0; pos < buf.length; pos += slot.length) {
      const piece = buf.subarray(pos, pos + slot.length);
      slot.set(piece);
      machine.feed(piece.length === slot.length ? slot : slot.subarray(0, piece.length), addr);
    }
  }
  return machine.end() as Scanned<S>;
}
