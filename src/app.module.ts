import { DynamicModule, Module, Type } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { ApiModule } from './api/api.module';
import type { AppConfig, RoleName } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { Clock } from './common/clock/clock';
import { DatabaseModule } from './database/database.module';
import { HealthModule } from './health/health.module';
import { loggingParams } from './observability/logging';
import { ObservabilityModule } from './observability/observability.module';
import { PollerModule } from './poller/poller.module';
import { QueueModule } from './queue/queue.module';
import { RelayModule } from './relay/relay.module';
import { WorkerModule } from './worker/worker.module';

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
  static forRoot(config: AppConfig): DynamicModule {
    if (!config.databaseUrl) throw new Error('AppModule needs a resolved database URL');
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggerModule.forRoot(loggingParams(config.logLevel)),
        DatabaseModule.forRoot(config.databaseUrl),
        QueueModule,
        ObservabilityModule,
        HealthModule,
        ...[...config.roles].map((role) => ROLE_MODULES[role]),
      ],
      providers: [{ provide: Clock, useClass: Clock }],
      exports: [Clock],
      global: true,
    };
  }
}
