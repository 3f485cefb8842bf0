/**
 * The held walk (issue 30, the idle daemon's minute): a walk of the sessions tree whose every
 * listing is the one the last walk used, still holding, hands on the last walk's very documents
 * array, instead of splitting 10,000 stored listings and building 13,000 paths and objects again.
 * Each folder is still stat-ed (its mark, as walkSessions does), so what the walk can see, it
 * sees: an entry added, removed or renamed in any folder changes that folder's mark, its listing
 * is then read again (a new stored listing, not the held one), and the whole walk is taken.
 *
 * Only a walk with nothing outside its listings is held: no symlink (its target can change under
 * the same name), no entry of another kind (a stat of its own), no folder gone or unreadable (a
 * problem is reported at every walk). Documents are not stat-ed here, held or not: the gate's stat
 * of each (Adapter.unchangedNow) sees a document rewritten in place.
 */
import type { Stats } from "node:fs";
import { type ListingMemo, listingHolds, type StoredListing } from "../listings.ts";
import { statNow } from "../stat-now.ts";
import type { WalkedDocument } from "./types.ts";

/** A walk a later one may hand on: the listings it used (the sessions dir's first), and what it found. */
export interface HeldWalk {
  readonly listings: readonly StoredListing[];
  /** The session folders walked, in order (listings[i + 1] is folders[i]'s). */
  readonly folders: readonly string[];
  readonly found: WalkedDocument[];
  /** The compaction files the walk listed, handed to the caller's set again. */
  readonly compactions: readonly string[];
}

/** Where an adapter keeps its last holdable walk (in memory only). */
export interface WalkHold {
  last: HeldWalk | undefined;
}

export function walkHold(): WalkHold {
  return { last: undefined };
}

/**
 * The last walk's documents when the sessions dir (stat `s`, stored listing `root`) and every
 * folder of the last walk have the very stored listings it used, each still holding; else undefined
 * (the caller walks in full, which lists again what changed and reports any failure).
 */
export function heldWalk(
  last: HeldWalk,
  root: StoredListing | undefined,
  s: Stats,
  memo: ListingMemo,
): WalkedDocument[] | undefined {
  if (root === undefined || root !== last.listings[0] || !listingHolds(root, s)) return undefined;
  for (let i = 0; i < last.folders.length; i++) {
    const dir = last.folders[i] as string;
    // Gone or not stat-able (undefined): the full walk that follows stats it again and reports it.
    const st = statNow(dir);
    const stored = memo.get(dir);
    if (st === undefined || stored !== last.listings[i + 1] || !listingHolds(stored, st)) return undefined;
  }
  return last.found;
}
