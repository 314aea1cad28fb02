import { runMigrations } from '../migrate';
import { withDatabase } from './with-database';

/** `npm run migrate`: applies pending migrations (the service also does this at start). */
withDatabase(runMigrations)
  .then(({ applied, pgBossInstalled }) => {
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'migrations: up to date');
    if (pgBossInstalled) console.log('installed the pg-boss schema');
  })
  .catch((error: unknown) => {
    console.error('migration failed:', error instanceof Error ? error.message : error);
    process.exit(1);
  });
