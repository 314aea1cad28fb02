import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../database';
import { migrateDatabase, SCHEMA } from '../schema';
import { errorSummary } from '../common';
import { cliLogger } from './cli-logger';
import { withDatabase } from './with-database';

/**
 * `npm run migration:generate -- <Name>`: migrates a database, then writes the SQL TypeORM would
 * need to match the entities into migrations/<timestamp>-<Name>.ts, for review and tidying.
 * Register the class in migrations/index.ts.
 */
async function generate(name: string): Promise<void> {
  await withDatabase(async ({ url, keyring }) => {
    await migrateDatabase(url, keyring);
    const dataSource = await new DataSource(dataSourceOptions(url, SCHEMA, 1)).initialize();
    try {
      const sql = await dataSource.driver.createSchemaBuilder().log();
      if (sql.upQueries.length === 0) {
        cliLogger.info('entities and migrations agree: nothing to generate');
        return;
      }
      const stamp = Date.now();
      const lines = (queries: { query: string }[]) =>
        queries
          .map((q) => `    await queryRunner.query(\`${q.query.replace(/`/g, '\\`')}\`);`)
          .join('\n');
      const file = join(process.cwd(), 'migrations', `${stamp}-${name}.ts`);
      writeFileSync(
        file,
        `import { MigrationInterface, QueryRunner } from 'typeorm';\n\n` +
          `export class ${name}${stamp} implements MigrationInterface {\n` +
          `  name = '${name}${stamp}';\n\n` +
          `  async up(queryRunner: QueryRunner): Promise<void> {\n${lines(sql.upQueries)}\n  }\n\n` +
          `  async down(queryRunner: QueryRunner): Promise<void> {\n${lines(sql.downQueries.reverse())}\n  }\n}\n`,
      );
      cliLogger.info({ file }, 'wrote a migration to review');
    } finally {
      await dataSource.destroy();
    }
  });
}

const name = process.argv[2];
if (!name || !/^[A-Z][A-Za-z0-9]+$/.test(name)) {
  cliLogger.error('usage: npm run migration:generate -- <PascalCaseName>');
  process.exit(2);
}
generate(name).catch((error: unknown) => {
  cliLogger.error({ err: errorSummary(error) }, 'migration generation failed');
  process.exit(1);
});
