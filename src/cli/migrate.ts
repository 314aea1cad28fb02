import { errorSummary } from '../common';
import { migrateDatabase } from '../schema';
import { cliLogger } from './cli-logger';
import { withDatabase } from './with-database';

/** `npm run migrate`: applies pending migrations (the service also does this at start). */
withDatabase(({ url, keyring }) => migrateDatabase(url, keyring))
  .then(({ applied, installed }) => {
    cliLogger.info(
      { applied, installed },
      applied.length ? 'migrations applied' : 'migrations: up to date',
    );
  })
  .catch((error: unknown) => {
    cliLogger.error({ err: errorSummary(error) }, 'migration failed');
    process.exit(1);
  });
