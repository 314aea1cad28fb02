import { errorSummary } from '../common';
import { currentOpenApiDocument } from './client-contract';
import { lintOpenApi } from './openapi-lint';

/** `npm run openapi:lint`: Redocly's recommended rules over the served document. */
async function main(): Promise<void> {
  const findings = await lintOpenApi(await currentOpenApiDocument());
  for (const f of findings)
    console.log(`${f.severity.padEnd(5)} ${f.rule}: ${f.message} (${f.pointer})`);
  const errors = findings.filter((f) => f.severity === 'error').length;
  console.log(`${errors} error(s), ${findings.length - errors} warning(s)`);
  process.exit(errors > 0 ? 1 : 0);
}

main().catch((error: unknown) => {
  console.error('openapi lint failed:', errorSummary(error));
  process.exit(2);
});
