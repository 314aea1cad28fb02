import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TenantsModule } from '../tenants/tenants.module';
import { AuthGuard } from './auth/auth.guard';
import { TenantsController } from './tenants/tenants.controller';

/** The api role: the management HTTP API. Controllers translate; the record modules decide. */
@Module({
  imports: [TenantsModule],
  controllers: [TenantsController],
  providers: [{ provide: APP_GUARD, useClass: AuthGuard }],
})
export class ApiModule {}
