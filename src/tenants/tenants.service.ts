import { Injectable } from '@nestjs/common';
import { NotFoundError, SingleFlight, UnauthorizedError } from '../common';
import { issueApiKey, parseApiKey, secretMatches } from './api-key';
import { DEFAULT_QUOTAS, Tenant, TenantQuotas } from './tenant';
import { TenantsRepository } from './tenants.repository';

@Injectable()
export class TenantsService {
  /**
   * Every tenant call looks its key up; the calls of one key that arrive while its lookup is in
   * flight share it (a busy client's concurrent requests cost one statement, not one each).
   */
  private readonly keyLookups = new SingleFlight<
    string,
    Awaited<ReturnType<TenantsRepository['findByActiveKey']>>
  >();

  constructor(private readonly tenants: TenantsRepository) {}

  /** Creates a tenant and returns its API key: the only time the key is ever shown. */
  async create(
    name: string,
    quotas: Partial<TenantQuotas>,
  ): Promise<{ tenant: Tenant; apiKey: string }> {
    const key = issueApiKey();
    const tenant = await this.tenants.createWithKey(name, { ...DEFAULT_QUOTAS, ...quotas }, key);
    return { tenant, apiKey: key.apiKey };
  }

  async get(id: string): Promise<Tenant> {
    const tenant = await this.tenants.findById(id);
    if (!tenant) throw new NotFoundError('tenant', id);
    return tenant;
  }

  async update(
    id: string,
    changes: { name?: string; quotas?: Partial<TenantQuotas> },
  ): Promise<Tenant> {
    const tenant = await this.tenants.updateQuotas(id, changes.quotas ?? {}, changes.name);
    if (!tenant) throw new NotFoundError('tenant', id);
    return tenant;
  }

  /** Resolves a bearer API key to its tenant; every failure looks the same to the caller. */
  async authenticate(apiKey: string): Promise<Tenant> {
    const parsed = parseApiKey(apiKey);
    const stored = parsed
      ? await this.keyLookups.run(parsed.keyId, () => this.tenants.findByActiveKey(parsed.keyId))
      : null;
    if (!parsed || !stored || !secretMatches(parsed.secret, stored.secretSha256)) {
      throw new UnauthorizedError('missing or invalid API key');
    }
    return stored.tenant;
  }
}
