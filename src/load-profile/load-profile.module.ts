import { Module } from '@nestjs/common';
import { LoadProfileRepository } from './load-profile.repository';
import { LoadProfileService } from './load-profile.service';

/**
 * Projected load (record module): per tenant, the runs its schedules will need in each minute,
 * kept as counters so a create is checked against the tenant's rate without a scan.
 */
@Module({
  providers: [LoadProfileRepository, LoadProfileService],
  exports: [LoadProfileService],
})
export class LoadProfileModule {}
