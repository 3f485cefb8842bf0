// The naive baseline of the cli case: read and JSON.parse every `<sessions>/<root>/*.messages.json`,
// the least any tool that looks at every message must do. Prints documents and messages.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2];
let documents = 0;
let messages = 0;
for (const root of readdirSync(dir)) {
  for (const f of readdirSync(join(dir, root))) {
    if (!f.endsWith(".messages.json")) continue;
    const doc = JSON.parse(readFileSync(join(dir, root, f), "utf8"));
    documents++;
    messages += doc.messages.length;
  }
}
process.stdout.write(`${documents} ${messages}\n`);
