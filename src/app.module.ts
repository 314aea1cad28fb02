import { DynamicModule, Module, Type } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { ApiModule } from './api';
import { type AppConfig, type RoleName, ConfigModule } from './config';
import { Clock } from './common';
import { DatabaseModule } from './database';
import { HealthModule } from './health';
import { loggingParams, ObservabilityModule } from './observability';
import { SCHEMA } from './schema';
import { SecretsModule } from './secrets';
import { PollerModule } from './poller';
import { QueueModule } from './queue';
import { RelayModule } from './relay';
import { WorkerModule } from './worker';

const ROLE_MODULES: Record<RoleName, Type> = {
  api: ApiModule,
  poller: PollerModule,
  relay: RelayModule,
  worker: WorkerModule,
};

/**
 * Every replica is the same program; ROLES picks which role modules it composes. Health and
 * metrics are served by every replica so each can be probed and scraped.
 */
@Module({})
export class AppModule {
  /** `clock` replaces the process clock (tests move time; production never passes one). */
  static forRoot(config: AppConfig, clock: Clock = new Clock()): DynamicModule {
    if (!config.databaseUrl) throw new Error('AppModule needs a resolved database URL');
    if (!config.secretsKeyring) throw new Error('AppModule needs a resolved secrets key');
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        SecretsModule.forRoot(config.secretsKeyring),
        LoggerModule.forRoot(loggingParams(config.logLevel)),
        DatabaseModule.forRoot(config.databaseUrl, config.database.poolSize, SCHEMA, {
          connectTimeoutMs: config.database.connectTimeoutMs,
          primaryCheckIntervalMs: config.database.primaryCheckIntervalMs,
          poolIdleMs: config.database.poolIdleMs,
        }),
        QueueModule,
        ObservabilityModule,
        HealthModule,
        ...[...config.roles].map((role) => ROLE_MODULES[role]),
      ],
      providers: [{ provide: Clock, useValue: clock }],
      exports: [Clock],
      global: true,
    };
  }
}
