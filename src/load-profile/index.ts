export {
  LoadProjections,
  LoadWindow,
  projectLoad,
  type LoadContribution,
  type LoadSource,
} from './load-contribution';
export {
  ScheduleLoadEntity,
  TenantLoadInstantEntity,
  TenantLoadProfileEntity,
} from './load-profile.entity';
export { LoadProfileModule } from './load-profile.module';
export { LoadProfileService, type LoadChange } from './load-profile.service';
