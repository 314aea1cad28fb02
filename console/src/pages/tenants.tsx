import { useState } from 'preact/hooks';
import type { Schemas } from '../../../src/client';
import { Card, Definition, ErrorBanner, Field } from '../components/ui';
import { ApiError, must, type Session } from '../session';

type Tenant = Schemas['TenantDto'];
type Usage = Schemas['UsageDto'];

/** The operator's view (admin token): a tenant's quotas by id, and creating a tenant. */
export function TenantsPage({ session }: { session: Session }) {
  const [id, setId] = useState('');
  const [tenant, setTenant] = useState<Tenant | null>(null);
  const [usage, setUsage] = useState<Usage | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<Schemas['CreatedTenantDto'] | null>(null);
  const [createError, setCreateError] = useState<unknown>(null);

  const look = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setTenant(null);
    setUsage(null);
    try {
      const path = { id: id.trim() };
      setTenant(must(await session.client.GET('/tenants/{id}', { params: { path } })));
      setUsage(must(await session.client.GET('/tenants/{id}/usage', { params: { path } })));
    } catch (e) {
      setError(e);
    }
  };
  const create = async (event: Event) => {
    event.preventDefault();
    setCreateError(null);
    try {
      const answer = must(await session.client.POST('/tenants', { body: { name } }));
      setCreated(answer);
      setTenant(answer);
      setUsage(null);
    } catch (e) {
      setCreateError(e);
    }
  };
  return (
    <div class="columns">
      <Card title="Tenant">
        <form class="form inline" onSubmit={look}>
          <Field label="Tenant id">
            <input
              name="tenantId"
              value={id}
              onInput={(e) => setId((e.target as HTMLInputElement).value)}
            />
          </Field>
          <button type="submit">Show</button>
        </form>
        <ErrorBanner error={error} />
        {tenant && (
          <Definition
            items={[
              ['Id', tenant.id],
              ['Name', tenant.name],
              ['Max active schedules', tenant.quotas.maxActiveSchedules],
              ['Dispatch rate', `${tenant.quotas.dispatchRatePerSecond} runs/s`],
              ['Max concurrent runs', tenant.quotas.maxConcurrentRuns],
              ...Object.entries(tenant.quotas)
                .filter(
                  ([k]) =>
                    !['maxActiveSchedules', 'dispatchRatePerSecond', 'maxConcurrentRuns'].includes(
                      k,
                    ),
                )
                .map(([k, v]): [string, string] => [k, String(v)]),
            ]}
          />
        )}
        {usage && (
          <Definition
            items={[
              [
                'Active schedules',
                `${usage.activeSchedules} of ${usage.quotas.maxActiveSchedules}`,
              ],
              [
                'Runs holding permits',
                `${usage.runsHoldingPermits} of ${usage.quotas.maxConcurrentRuns}`,
              ],
              [
                'Waiting (concurrency / rate / fleet)',
                `${usage.waitingRuns.throttled_concurrency} / ${usage.waitingRuns.throttled_rate} / ${usage.waitingRuns.throttled_fleet}`,
              ],
              [
                'Oldest waiting',
                usage.oldestWaitingSeconds > 0 ? `${usage.oldestWaitingSeconds} s` : 'none waiting',
              ],
            ]}
          />
        )}
      </Card>
      <Card title="New tenant">
        <form class="form" onSubmit={create}>
          <Field
            label="Name"
            error={createError instanceof ApiError ? createError.fieldErrors.name : undefined}
          >
            <input
              name="tenantName"
              required
              value={name}
              onInput={(e) => setName((e.target as HTMLInputElement).value)}
            />
          </Field>
          <ErrorBanner error={createError} />
          <button type="submit" class="primary">
            Create tenant
          </button>
        </form>
        {created && (
          <p class="notice">
            API key for {created.name}, shown once:{' '}
            <code data-testid="api-key">{created.apiKey}</code>
          </p>
        )}
      </Card>
    </div>
  );
}
