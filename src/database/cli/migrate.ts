import { errorSummary } from '../../observability/error-summary';
import { runMigrations } from '../migrate';
import { cliLogger } from './cli-logger';
import { withDatabase } from './with-database';

/** `npm run migrate`: applies pending migrations (the service also does this at start). */
withDatabase(runMigrations)
  .then(({ applied, pgBossInstalled }) => {
    cliLogger.info(
      { applied, pgBossInstalled },
      applied.length ? 'migrations applied' : 'migrations: up to date',
    );
  })
  .catch((error: unknown) => {
    cliLogger.error({ err: errorSummary(error) }, 'migration failed');
    process.exit(1);
  });
