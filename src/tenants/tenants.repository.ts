import { Injectable } from '@nestjs/common';
import { SqlRunner } from '../database';
import { ApiKeyEntity } from './api-key.entity';
import { TenantEntity } from './tenant.entity';
import { Tenant, TenantQuotas } from './tenant';
import { TENANT_BY_ACTIVE_KEY } from './tenants.sql';

@Injectable()
export class TenantsRepository {
  constructor(private readonly sql: SqlRunner) {}

  /** The tenant and its first key are written together: a tenant never exists without a key. */
  async createWithKey(
    name: string,
    quotas: TenantQuotas,
    key: { keyId: string; secretSha256: Buffer },
  ): Promise<Tenant> {
    return this.sql.transaction(async (tx) => {
      const em = this.sql.manager(tx);
      const tenant = await em.getRepository(TenantEntity).save({ name, ...quotas });
      await em.getRepository(ApiKeyEntity).insert({
        keyId: key.keyId,
        tenantId: tenant.id,
        secretSha256: key.secretSha256,
        revokedAt: null,
      });
      return toTenant(tenant);
    });
  }

  async findById(id: string): Promise<Tenant | null> {
    const row = await this.sql.manager().getRepository(TenantEntity).findOneBy({ id });
    return row ? toTenant(row) : null;
  }

  async updateQuotas(
    id: string,
    patch: Partial<TenantQuotas>,
    name?: string,
  ): Promise<Tenant | null> {
    const repo = this.sql.manager().getRepository(TenantEntity);
    const changes = { ...patch, ...(name === undefined ? {} : { name }) };
    if (Object.keys(changes).length > 0) await repo.update({ id }, changes);
    return this.findById(id);
  }

  /** The tenant of an active key and the digest of the key's secret, in one statement. */
  async findByActiveKey(keyId: string): Promise<{ tenant: Tenant; secretSha256: Buffer } | null> {
    const [row] = await this.sql.rows(TENANT_BY_ACTIVE_KEY, [keyId]);
    if (!row) return null;
    return {
      secretSha256: Buffer.from(row.secret_sha256 as Buffer),
      tenant: {
        id: row.id as string,
        name: row.name as string,
        quotas: {
          maxActiveSchedules: row.max_active_schedules as number,
          dispatchRatePerSecond: row.dispatch_rate_per_second as number,
          maxConcurrentRuns: row.max_concurrent_runs as number,
          weight: row.weight as number,
          historyRetentionDays: row.history_retention_days as number,
        },
        createdAt: row.created_at as Date,
        updatedAt: row.updated_at as Date,
      },
    };
  }
}

function toTenant(row: TenantEntity): Tenant {
  return {
    id: row.id,
    name: row.name,
    quotas: {
      maxActiveSchedules: row.maxActiveSchedules,
      dispatchRatePerSecond: row.dispatchRatePerSecond,
      maxConcurrentRuns: row.maxConcurrentRuns,
      weight: row.weight,
      historyRetentionDays: row.historyRetentionDays,
    },
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
