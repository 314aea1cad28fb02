export { ApiKeyEntity } from './api-key.entity';
export { DEFAULT_QUOTAS, HISTORY_RETENTION_DAYS, type Tenant, type TenantQuotas } from './tenant';
export { TenantEntity } from './tenant.entity';
export { TenantsModule } from './tenants.module';
export { TenantsService } from './tenants.service';
export { apiKeyIdOf, tokensEqual } from './api-key';
