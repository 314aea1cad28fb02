import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions, type SchemaDefinition } from './data-source-options';
import { SqlRunner } from './sql-runner';
import { Transactions } from './transactions';

/** The connection pool, and the two ways in: SqlRunner (repositories), Transactions (services). */
@Module({})
export class DatabaseModule {
  static forRoot(url: string, poolSize: number, schema: SchemaDefinition): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      imports: [
        TypeOrmModule.forRoot({
          ...dataSourceOptions(url, schema, poolSize),
          retryAttempts: 3,
          retryDelay: 1000,
        }),
      ],
      providers: [SqlRunner, Transactions],
      exports: [SqlRunner, Transactions],
    };
  }
}
