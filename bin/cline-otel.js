#!/usr/bin/env node
// Installed package: run the compiled CLI (built by `npm run build`, run on `npm pack`).
import "../dist/cli/main.js";
