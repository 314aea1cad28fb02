import { randomUUID } from 'node:crypto';
import type { TestApp } from './test-app';

/** A tenant with a target, and a way to create schedules for it through the API. */
export async function tenantWithTarget(t: TestApp, quotas: Record<string, number> = {}) {
  const tenant = await t.createTenant(`tenant-${randomUUID().slice(0, 8)}`, {
    maxActiveSchedules: 100_000,
    ...quotas,
  });
  const target = await t.http
    .post('/targets')
    .set('Authorization', `Bearer ${tenant.apiKey}`)
    .send({ name: `target-${randomUUID()}`, url: 'https://example.com/hook', deduplicates: true });
  if (target.status !== 201)
    throw new Error(`target creation failed: ${target.status} ${target.text}`);
  const createSchedule = async (body: Record<string, unknown>) => {
    const res = await t.http
      .post('/schedules')
      .set('Authorization', `Bearer ${tenant.apiKey}`)
      .set('Idempotency-Key', randomUUID())
      .send({ name: 's', targetId: target.body.id, ...body });
    if (res.status !== 201) throw new Error(`schedule creation failed: ${res.status} ${res.text}`);
    return res.body as { id: string; revision: number; nextDueAt: string };
  };
  return { tenant, targetId: target.body.id as string, createSchedule };
}
