import { Card, Definition, ErrorBanner, Loading } from '../components/ui';
import { useLoad } from '../data';
import { ApiError, type Session } from '../session';

/**
 * The tenant's usage from `GET /usage` (active schedules against the quota, runs waiting by
 * reason, the oldest waiting age, the busiest minutes ahead). That route comes with the
 * tenant-usage work and is not in the typed contract yet, so it is read by hand and shown field
 * by field as served. A server without it says so: no figure is made up here.
 */
export function UsagePage({ session }: { session: Session }) {
  const usage = useLoad(async () => {
    const response = await fetch('/usage', {
      headers: { Authorization: `Bearer ${session.token}`, Accept: 'application/json' },
    });
    const body: unknown = await response.json().catch(() => undefined);
    if (response.status === 404) return null;
    if (!response.ok) throw new ApiError(response.status, body);
    return body as Record<string, unknown>;
  }, []);
  return (
    <Card title="Usage">
      <ErrorBanner error={usage.error} />
      {usage.data === undefined && !usage.error && <Loading />}
      {usage.data === null && (
        <p class="notice" data-testid="usage-missing">
          This server does not report usage yet (it has no <code>GET /usage</code>). Your quotas are
          set by the operator: signed in with the admin token, the Tenants page shows them.
        </p>
      )}
      {usage.data && <Definition items={flatten(usage.data)} />}
    </Card>
  );
}

function flatten(value: unknown, prefix = ''): Array<[string, string]> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [[prefix || 'value', Array.isArray(value) ? JSON.stringify(value) : String(value)]];
  }
  return Object.entries(value).flatMap(([k, v]) => flatten(v, prefix ? `${prefix}.${k}` : k));
}
