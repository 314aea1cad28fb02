export type { ProjectedMinute, TenantUsage } from './usage';
export { UsageModule } from './usage.module';
export { BUSIEST_MINUTES, UsageService } from './usage.service';
