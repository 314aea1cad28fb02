import { randomUUID } from 'node:crypto';
import { eventually } from './eventually';
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

/**
 * Creates `count` one-time schedules of one tenant due at `at` through the API, 1,000 a batch,
 * each with `fields` besides (a priority, say).
 */
export async function oneTimeSchedulesAt(
  t: TestApp,
  make: Awaited<ReturnType<typeof tenantWithTarget>>,
  count: number,
  at: Date,
  fields: Record<string, unknown> = {},
): Promise<void> {
  for (let done = 0; done < count; done += 1000) {
    const res = await t.http
      .post('/schedules/batch')
      .set('Authorization', `Bearer ${make.tenant.apiKey}`)
      .send({
        items: Array.from({ length: Math.min(1000, count - done) }, (_, i) => ({
          idempotencyKey: randomUUID(),
          schedule: {
            name: `f${done + i}`,
            targetId: make.targetId,
            runAt: at.toISOString(),
            ...fields,
          },
        })),
      });
    if (res.status !== 200) throw new Error(`batch creation failed: ${res.status} ${res.text}`);
  }
}

/**
 * A schedule that fires every second, as a witness that the poller is working: once the witness
 * has an occurrence at or after an instant, the poller has dispatched everything due before it.
 * A test that asserts something did NOT happen waits on this instead of sleeping.
 */
export async function pollerWitness(
  make: Awaited<ReturnType<typeof tenantWithTarget>>,
  db: { query(sql: string, params: unknown[]): Promise<Array<Record<string, unknown>>> },
) {
  const witness = await make.createSchedule({
    cron: '* * * * * *',
    timezone: 'UTC',
    overlapPolicy: 'allow',
  });
  return {
    /** Resolves once the poller has dispatched the witness's instant at or after `instant`. */
    async passed(instant: Date, timeoutMs = 15_000): Promise<void> {
      await eventually(
        async () => {
          const rows = await db.query(
            'SELECT 1 FROM occurrences WHERE schedule_id = $1 AND scheduled_at >= $2 LIMIT 1',
            [witness.id, instant],
          );
          if (rows.length === 0)
            throw new Error(`the poller has not reached ${instant.toISOString()}`);
        },
        { timeoutMs, intervalMs: 50 },
      );
    },
  };
}
