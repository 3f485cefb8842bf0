/**
 * Rewrites one messages document in place exactly as Cline does (writeFileSync:
 * truncate, then write) every 20-50 ms, appending one assistant message each time.
 * argv: <path> <sessionId> <rewrites> <fillerBytes>
 */
import { writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { type MsgSpec, messagesDoc } from "../helpers/cline-tree.ts";

const [path, sessionId, rewritesArg, fillerArg] = process.argv.slice(2) as [string, string, string, string];
const rewrites = Number(rewritesArg);
const filler = "f".repeat(Number(fillerArg));
const msgs: MsgSpec[] = [];
for (let i = 0; i < rewrites; i++) {
  msgs.push({
    id: `msg_${i}`,
    metrics: { inputTokens: 1000 + i, outputTokens: i + 1, cacheReadTokens: i, cacheWriteTokens: 0 },
  });
  writeFileSync(path, `${JSON.stringify(messagesDoc(sessionId, "lead", msgs, filler), null, 2)}\n`);
  await sleep(20 + Math.floor(Math.random() * 30));
}
