import { randomUUID } from 'node:crypto';

export interface Tenant {
  id: string;
  apiKey: string;
  targetId: string;
}

export interface CreatedSchedule {
  id: string;
  nextDueAt: string | null;
}

/** Quotas high enough that the benchmark measures the engine, not the tenant limits. */
export const BENCH_QUOTAS = {
  maxActiveSchedules: 10_000_000,
  dispatchRatePerSecond: 100_000,
  maxConcurrentRuns: 100_000,
};

/**
 * The management API as a client uses it: tenants with the admin token, then targets and
 * schedules with the tenant's key (POST /schedules with an Idempotency-Key). 429s are retried
 * after Retry-After, so a bench that outruns the rate limit slows down instead of failing; 5xx
 * answers are retried a few times with the same Idempotency-Key (safe by contract) and counted.
 */
export class ApiClient {
  /** 5xx answers that were retried (same Idempotency-Key, so a retry cannot create twice). */
  serverErrors = 0;
  rateLimited = 0;

  constructor(
    private readonly baseUrl: string,
    private readonly adminToken: string,
  ) {}

  async tenantWithTarget(
    name: string,
    targetUrl: string,
    quotas: Record<string, number> = BENCH_QUOTAS,
  ): Promise<Tenant> {
    const tenant = await this.post<{ id: string; apiKey: string }>('/tenants', this.adminToken, {
      name,
      quotas,
    });
    const target = await this.post<{ id: string }>('/targets', tenant.apiKey, {
      name: `${name}-sink`,
      url: targetUrl,
      deduplicates: true,
      timeoutMs: 10_000,
    });
    return { id: tenant.id, apiKey: tenant.apiKey, targetId: target.id };
  }

  /** POST /schedules with a fresh Idempotency-Key; callers bound the concurrency. */
  createSchedule(tenant: Tenant, body: Record<string, unknown>): Promise<CreatedSchedule> {
    return this.post<CreatedSchedule>(
      '/schedules',
      tenant.apiKey,
      { name: 'bench', targetId: tenant.targetId, ...body },
      { 'Idempotency-Key': randomUUID() },
    );
  }

  private async post<T>(
    path: string,
    token: string,
    body: unknown,
    headers: Record<string, string> = {},
  ): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const res = await fetch(`${this.baseUrl}${path}`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': 'application/json',
          ...headers,
        },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status === 201 || res.status === 200) return JSON.parse(text) as T;
      if (res.status === 429 && attempt < 20) {
        this.rateLimited++;
        const wait = Number(res.headers.get('retry-after') ?? '1');
        await new Promise((done) => setTimeout(done, Math.max(50, wait * 1000)));
        continue;
      }
      if (res.status >= 500 && attempt < 5) {
        // Reported, not hidden: the scenario notes how many calls needed a retry.
        this.serverErrors++;
        await new Promise((done) => setTimeout(done, 100 * (attempt + 1)));
        continue;
      }
      throw new Error(`POST ${path} answered ${res.status}: ${text.slice(0, 500)}`);
    }
  }
}

/** Runs `fn` over `items` with at most `limit` calls in flight, keeping the order of results. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index], index);
    }
  });
  await Promise.all(lanes);
  return results;
}
