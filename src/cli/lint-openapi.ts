import { errorSummary } from '../common';
import { cliLogger } from './cli-logger';
import { currentOpenApiDocument } from './client-contract';
import { lintOpenApi } from './openapi-lint';

/** `npm run openapi:lint`: Redocly's recommended rules over the served document. */
async function main(): Promise<void> {
  const findings = await lintOpenApi(await currentOpenApiDocument());
  for (const f of findings) {
    const log =
      f.severity === 'error' ? cliLogger.error.bind(cliLogger) : cliLogger.warn.bind(cliLogger);
    log({ rule: f.rule, pointer: f.pointer }, f.message);
  }
  const errors = findings.filter((f) => f.severity === 'error').length;
  cliLogger.info({ errors, warnings: findings.length - errors }, 'openapi lint done');
  process.exit(errors > 0 ? 1 : 0);
}

main().catch((error: unknown) => {
  cliLogger.error({ err: errorSummary(error) }, 'openapi lint failed');
  process.exit(2);
});
