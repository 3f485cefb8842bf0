/** Every signal record of a ledger, as the signal batch reads them (one page of up to 10,000, all kinds). */
import type Database from "better-sqlite3";
import type { SignalRow } from "../../src/ledger/signals/records.ts";
import { SignalWatermarks } from "../../src/ledger/signals/watermarks.ts";

export const wholeBatch = (db: Database.Database): SignalRow[] =>
  new SignalWatermarks(db).batch(
    { exporter: "probe", watermark: 0, fromMs: 0 },
    new Set(["chat", "tool", "turn", "compaction", "edit"]),
    10_000,
  ).rows as SignalRow[];
