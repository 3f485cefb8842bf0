// The naive baseline of the task-format rows of the ratios case: read and JSON.parse every
// `<tasks>/<id>/ui_messages.json`, and JSON.parse the text of each api_req_started (the request's
// counts live in that inner JSON string): the least any tool that looks at every request must do.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2];
let tasks = 0;
let tokensIn = 0;
for (const id of readdirSync(dir)) {
  const msgs = JSON.parse(readFileSync(join(dir, id, "ui_messages.json"), "utf8"));
  tasks++;
  for (const m of msgs) if (m.say === "api_req_started" && m.text) tokensIn += JSON.parse(m.text).tokensIn;
}
process.stdout.write(`${tasks} ${tokensIn}\n`);
