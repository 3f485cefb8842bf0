/**
 * Allow-list scanning of JSON files and buffers. See machine.ts for the engine and its
 * validation policy; this file owns the file handle, the chunked reads and the stats.
 */
import { constants, type BigIntStats } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
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

export interface ScanFileOptions {
  /** Read size; the scanner holds two such buffers (one being scanned, one being read). Default 2 MiB. */
  readonly chunkBytes?: number;
}

export const DEFAULT_CHUNK_BYTES = 2 * 1024 * 1024;

function toFileStat(s: BigIntStats): FileStat {
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

    const machine = new ScanMachine(schema, path);
    const bufs = [Buffer.allocUnsafe(chunkBytes), Buffer.allocUnsafe(chunkBytes)] as const;
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
      cur ^= 1;
      inflight = readInto(bufs[cur] as Buffer, pos);
      machine.feed(got === buf.length ? buf : buf.subarray(0, got));
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

/** Scans an in-memory document with the same engine, as one chunk. */
export function scanBuffer<S extends Schema>(buf: Uint8Array, schema: S): Scanned<S> {
  const machine = new ScanMachine(schema, "");
  if (buf.length > 0) {
    machine.feed(Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength));
  }
  return machine.end() as Scanned<S>;
}
