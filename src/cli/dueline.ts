#!/usr/bin/env node
import { runCli } from '../command-line';

/** The package's bin: `npx dueline …` (see `dueline --help`). */
void runCli(process.argv.slice(2), process.env, {
  out: (text) => process.stdout.write(text + '\n'),
  err: (text) => process.stderr.write(text + '\n'),
}).then((code) => {
  process.exitCode = code;
});
