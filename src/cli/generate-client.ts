import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorSummary } from '../common';
import {
  CLIENT_CONTRACT_PATH,
  currentOpenApiDocument,
  renderClientContract,
} from './client-contract';
import { cliLogger } from './cli-logger';

/**
 * `npm run client:generate`: regenerates the typed client's contract from the routes and DTOs
 * (the document /docs-json serves), to commit after an API change.
 *
 * `--document <url|file>` reads the document from a running server's /docs-json (or a file)
 * instead; `--check` writes nothing and exits 1 when the committed contract differs (the suite
 * runs it against the test app: contract drift fails the build).
 */
async function main(args: string[]): Promise<number> {
  const check = args.includes('--check');
  const at = args.indexOf('--document');
  const source = at >= 0 ? args[at + 1] : undefined;
  if (at >= 0 && !source) throw new Error('--document needs a URL or a file');
  const document = source ? await readDocument(source) : await currentOpenApiDocument();
  const file = join(process.cwd(), CLIENT_CONTRACT_PATH);
  const generated = await renderClientContract(document);
  if (!check) {
    writeFileSync(file, generated);
    cliLogger.info({ file: CLIENT_CONTRACT_PATH }, 'wrote the client contract');
    return 0;
  }
  const drift = firstDifference(readFileSync(file, 'utf8'), generated);
  if (drift === null) {
    cliLogger.info({ file: CLIENT_CONTRACT_PATH }, 'the client contract matches the document');
    return 0;
  }
  cliLogger.error(
    { file: CLIENT_CONTRACT_PATH, ...drift },
    'the client contract is out of date: run npm run client:generate and commit the result',
  );
  return 1;
}

async function readDocument(source: string): Promise<object> {
  if (!/^https?:\/\//.test(source)) return JSON.parse(readFileSync(source, 'utf8')) as object;
  const res = await fetch(source);
  if (!res.ok) throw new Error(`${source} answered ${res.status}`);
  return (await res.json()) as object;
}

function firstDifference(
  committed: string,
  generated: string,
): { line: number; committed: string; generated: string } | null {
  const a = committed.split('\n');
  const b = generated.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) {
      return { line: i + 1, committed: a[i] ?? '(end)', generated: b[i] ?? '(end)' };
    }
  }
  return null;
}

main(process.argv.slice(2))
  .then((code) => process.exit(code))
  .catch((error: unknown) => {
    cliLogger.error({ err: errorSummary(error) }, 'client generation failed');
    process.exit(2);
  });
