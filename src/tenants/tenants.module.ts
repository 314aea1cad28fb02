import { Module } from '@nestjs/common';
import { DispatchBudget } from './dispatch-budget';
import { TenantsRepository } from './tenants.repository';
import { TenantsService } from './tenants.service';

@Module({
  providers: [TenantsRepository, TenantsService, DispatchBudget],
  exports: [TenantsService, DispatchBudget],
})
export class TenantsModule {}
