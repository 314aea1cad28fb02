import { Module } from '@nestjs/common';
import { AdmissionModule } from '../admission';
import { LoadProfileModule } from '../load-profile';
import { SchedulesModule } from '../schedules';
import { UsageService } from './usage.service';

/** Usage reports (duty): a tenant's quotas against what it uses, waits for and will need. */
@Module({
  imports: [AdmissionModule, LoadProfileModule, SchedulesModule],
  providers: [UsageService],
  exports: [UsageService],
})
export class UsageModule {}
