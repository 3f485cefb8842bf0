/**
 * Child process for privacy.test.ts. Usage:
 *   node --import tsx privacy-child.ts <mode> <docPath> <snapshotPath>
 * mode: scan-file | scan-file-7 | scan-file-indexOf | scan-buffer, or a control: parse | scan-file-leaky.
 * It reads the document only as bytes (never as a string, except in the `parse` control),
 * keeps the result alive, writes a V8 heap snapshot, and prints the result as JSON.
 */
import { readFileSync } from "node:fs";
import { writeHeapSnapshot } from "node:v8";
import { messagesDocumentSchema } from "../../src/adapter/cline/schema.ts";
import { scanBuffer, scanFile } from "../../src/scan/scanner.ts";
import { arr, obj, str } from "../../src/scan/schema.ts";

/** The product's own allow-list: this test proves what cline-otel really decodes. */
export const privacySchema = messagesDocumentSchema;

/** Same allow-list plus block `text`: the positive control that a scanner-decoded string IS seen. */
const leakySchema = obj({
  messages: arr(obj({ content: arr(obj({ type: str(), text: str(100_000) })) })),
});

async function run(mode: string, docPath: string): Promise<unknown> {
  switch (mode) {
    case "scan-file":
      return (await scanFile(docPath, privacySchema)).value;
    case "scan-file-7":
      return (await scanFile(docPath, privacySchema, { chunkBytes: 7 })).value;
    case "scan-file-indexOf":
      return (await scanFile(docPath, privacySchema, { chunkBytes: 4096, skipper: "indexOf" })).value;
    case "scan-buffer": {
      const bytes = readFileSync(docPath);
      return scanBuffer(bytes, privacySchema);
    }
    case "scan-file-leaky":
      return (await scanFile(docPath, leakySchema)).value;
    case "parse":
      return JSON.parse(readFileSync(docPath, "utf8"));
    default:
      throw new Error(`unknown mode ${mode}`);
  }
}

const [mode, docPath, snapshotPath] = process.argv.slice(2) as [string, string, string];
if (process.argv.length === 5) {
  const keep = await run(mode, docPath);
  (globalThis as { __keep?: unknown }).__keep = keep;
  writeHeapSnapshot(snapshotPath);
  process.stdout.write(
    `${mode === "scan-file" || mode.startsWith("scan-file-") || mode === "scan-buffer" ? JSON.stringify(keep) : "{}"}\n`,
  );
}
