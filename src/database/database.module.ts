import {
  DynamicModule,
  Inject,
  Injectable,
  Logger,
  Module,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  dataSourceOptions,
  primaryLocatorFor,
  type ConnectionTuning,
  type SchemaDefinition,
} from './data-source-options';
import { PrimaryLocator } from './primary-locator';
import { SqlRunner } from './sql-runner';
import { Transactions } from './transactions';

/** Keeps asking the server in use whether it is still the primary, while the app runs. */
@Injectable()
class PrimaryWatch implements OnModuleInit, OnApplicationShutdown {
  constructor(@Inject(PrimaryLocator) private readonly locator: PrimaryLocator) {}

  onModuleInit(): void {
    this.locator.start();
  }

  onApplicationShutdown(): void {
    this.locator.stop();
  }
}

/**
 * The connection pool, and the two ways in: SqlRunner (repositories), Transactions (services).
 * The PrimaryLocator it exports is the process's one view of which server takes writes; the
 * queue and the poller's LISTEN connection use it too.
 */
@Module({})
export class DatabaseModule {
  static forRoot(
    url: string,
    poolSize: number,
    schema: SchemaDefinition,
    tuning?: ConnectionTuning,
  ): DynamicModule {
    const locator = primaryLocatorFor(url, tuning, new Logger(PrimaryLocator.name));
    return {
      module: DatabaseModule,
      global: true,
      imports: [
        TypeOrmModule.forRoot({
          ...dataSourceOptions(url, schema, poolSize, locator, tuning),
          retryAttempts: 3,
          retryDelay: 1000,
        }),
      ],
      providers: [
        SqlRunner,
        Transactions,
        { provide: PrimaryLocator, useValue: locator },
        PrimaryWatch,
      ],
      exports: [SqlRunner, Transactions, PrimaryLocator],
    };
  }
}
