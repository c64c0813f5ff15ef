#!/usr/bin/env node
// The pss-sync executable (package.json "bin"; `npm run --silent sync -- <feed>` in the repository).
import { runCli } from "./pss-sync.ts";

await runCli();
