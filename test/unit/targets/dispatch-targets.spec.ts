import { randomUUID } from 'node:crypto';
import { DispatchTargets, type DispatchTarget } from '../../../src/targets';

function target(tenantId: string, id: string): DispatchTarget {
  return {
    id,
    tenantId,
    name: `target-${id.slice(0, 4)}`,
    kind: 'http',
    url: 'https://example.test/hook',
    method: 'POST',
    headers: {},
    timeoutMs: 1000,
    deduplicates: false,
    hasSigningSecret: false,
    previousSecretExpiresAt: null,
    maxConcurrency: null,
    ratePerSecond: null,
    status: 'active',
    disabledReason: null,
    backoffUntil: null,
    createdAt: new Date(0),
    updatedAt: new Date(0),
    signingSecrets: [],
    auth: null,
  };
}

describe('DispatchTargets: one read for a batch of many tenants', () => {
  const [a, b] = [randomUUID(), randomUUID()];
  const [ta, tb] = [randomUUID(), randomUUID()];
  const targets = new DispatchTargets([target(a, ta), target(b, tb)]);

  it.each([
    ['its own tenant', a, ta, ta],
    ['its own tenant (the other)', b, tb, tb],
    ["another tenant's target", a, tb, null],
    ["another tenant's target (the other way)", b, ta, null],
    ['an id nobody has', a, randomUUID(), null],
    ['a tenant it never read', randomUUID(), ta, null],
  ])('a run naming %s', (_, tenantId, targetId, expected) => {
    expect(targets.of(tenantId, targetId)?.id ?? null).toBe(expected);
  });
});
