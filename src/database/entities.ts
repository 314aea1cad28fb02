import { ApiKeyEntity } from '../tenants/api-key.entity';
import { TenantEntity } from '../tenants/tenant.entity';

/** Every TypeORM entity, for the data source, the migration generator and the drift test. */
export const ENTITIES = [TenantEntity, ApiKeyEntity];
