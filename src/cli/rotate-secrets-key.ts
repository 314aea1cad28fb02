import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { errorSummary } from '../common';
import { ConfigModule, loadConfig } from '../config';
import { DatabaseModule } from '../database';
import { migrateDatabase, SCHEMA } from '../schema';
import {
  parseKeyring,
  readOrCreateKeyFile,
  SecretsModule,
  withNewCurrentKey,
  writeKeyFile,
  type SecretKeyring,
} from '../secrets';
import { SigningKeysModule, SigningKeysService } from '../signing-keys';
import { TargetsModule, TargetsService } from '../targets';
import { cliLogger } from './cli-logger';
import { withDatabase } from './with-database';

/** Targets re-sealed per statement round. */
const BATCH = 200;

/**
 * `npm run secrets:rotate-key`: re-seals every secret at rest under the current key.
 *
 * - With SECRETS_KEY: the first key is the current one; list the old one after it
 *   (SECRETS_KEY=new,old) on every replica first, run this, then drop the old one.
 * - Embedded mode (no SECRETS_KEY): generates a new key in DATA_DIR/secrets-key, re-seals
 *   everything under it, then forgets the old key. Stop the service first (it holds the cluster).
 */
async function rotate(): Promise<void> {
  await withDatabase(async ({ url, keyring, embeddedDataDir }) => {
    let ring: SecretKeyring = keyring;
    if (embeddedDataDir) {
      const next = withNewCurrentKey(await readOrCreateKeyFile(embeddedDataDir));
      // Written before anything is re-sealed: an interrupted run leaves both keys readable.
      await writeKeyFile(embeddedDataDir, next);
      ring = parseKeyring(next);
      cliLogger.info({ keyId: ring.current.id }, 'generated a new key in DATA_DIR/secrets-key');
    }
    await migrateDatabase(url, ring);
    const total = await resealAll(url, ring);
    if (embeddedDataDir) {
      await writeKeyFile(embeddedDataDir, `${ring.current.key.toString('base64')}\n`);
      cliLogger.info('the old key is forgotten: every secret is sealed under the new one');
    } else if (ring.all.size > 1) {
      cliLogger.info(
        { keyId: ring.current.id },
        'every secret is sealed under the first key of SECRETS_KEY: the others can be dropped',
      );
    }
    cliLogger.info({ resealed: total, keyId: ring.current.id }, 'secrets key rotation done');
  });
}

async function resealAll(url: string, keyring: SecretKeyring): Promise<number> {
  const config = loadConfig({
    DATABASE_URL: url,
    ADMIN_TOKEN: 'x'.repeat(16),
    SECRETS_KEY: [...keyring.all.values()].map((k) => k.key.toString('base64')).join(','),
  });
  @Module({
    imports: [
      ConfigModule.forRoot(config),
      SecretsModule.forRoot(keyring),
      DatabaseModule.forRoot(url, 2, SCHEMA),
      TargetsModule,
      SigningKeysModule,
    ],
  })
  class RotationModule {}
  const app = await NestFactory.createApplicationContext(RotationModule, { logger: false });
  try {
    const targets = app.get(TargetsService);
    const keys = app.get(SigningKeysService);
    let total = 0;
    for (;;) {
      const done = await targets.resealSecrets(BATCH);
      if (done === 0) break;
      total += done;
      cliLogger.info({ targets: total }, 'targets re-sealed so far');
    }
    for (;;) {
      const done = await keys.resealSecrets(BATCH);
      if (done === 0) return total;
      total += done;
      cliLogger.info({ signingKeys: done }, 'JWT signing keys re-sealed');
    }
  } finally {
    await app.close();
  }
}

rotate().catch((error: unknown) => {
  cliLogger.error({ err: errorSummary(error) }, 'secrets key rotation failed');
  process.exit(1);
});
