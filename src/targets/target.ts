import type { TargetAuth, TargetAuthView } from './target-auth';

/** What the rest of the system knows about a registered target. Never carries the secret. */
export const TARGET_KINDS = ['http'] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];

export const TARGET_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type TargetMethod = (typeof TARGET_METHODS)[number];

export const TARGET_LIMITS = {
  nameMaxLength: 200,
  minTimeoutMs: 1000,
  maxTimeoutMs: 60_000,
  defaultTimeoutMs: 10_000,
  minSecretLength: 16,
  maxSecretLength: 256,
  /** How long a rotated-out secret keeps signing: default one day, at most 30. */
  defaultSecretOverlapSeconds: 86_400,
  maxSecretOverlapSeconds: 30 * 86_400,
  /** Flow control bounds, as the tenant quotas': maxConcurrency and ratePerSecond. */
  minFlowLimit: 1,
  maxFlowLimit: 100_000,
} as const;

export const TARGET_STATUSES = ['active', 'disabled'] as const;
/** `disabled` after a 410 Gone (or by request): its runs end FAILED target_gone. */
export type TargetStatus = (typeof TARGET_STATUSES)[number];

/** The disabledReason of a target disabled through PATCH. */
export const DISABLED_BY_REQUEST = 'disabled by request';

export interface Target {
  id: string;
  tenantId: string;
  name: string;
  kind: TargetKind;
  url: string;
  method: TargetMethod;
  headers: Record<string, string>;
  timeoutMs: number;
  /** The target honours Idempotency-Key, so an attempt with an unknown outcome may be retried. */
  deduplicates: boolean;
  hasSigningSecret: boolean;
  /** How dueline authenticates to it, without the secrets; null for none. */
  auth: TargetAuthView | null;
  /** Until when the secret a rotation replaced keeps signing; null without one. */
  previousSecretExpiresAt: Date | null;
  /** At most this many of its runs at once, whatever their schedule; null: no cap. */
  maxConcurrency: number | null;
  /** At most this many of its runs start per second; null: no cap. */
  ratePerSecond: number | null;
  status: TargetStatus;
  /** Why it is disabled (the 410's attempt, or by request); null while active. */
  disabledReason: string | null;
  /** A Retry-After it sent holds all its runs back until then; null (or past): none. */
  backoffUntil: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One tenant's target, as a run names it. */
export interface TargetRef {
  tenantId: string;
  targetId: string;
}

/**
 * The targets a batch of runs of many tenants is sent to, each found only under its own tenant
 * (a run of one tenant never gets another's target, whatever id it names).
 */
export class DispatchTargets {
  private readonly byTenant = new Map<string, Map<string, DispatchTarget>>();

  constructor(targets: readonly DispatchTarget[] = []) {
    for (const target of targets) {
      const ofTenant = this.byTenant.get(target.tenantId) ?? new Map<string, DispatchTarget>();
      ofTenant.set(target.id, target);
      this.byTenant.set(target.tenantId, ofTenant);
    }
  }

  /** The live target `targetId` of `tenantId`, or null (unknown, another's, deleted). */
  of(tenantId: string, targetId: string): DispatchTarget | null {
    return this.byTenant.get(tenantId)?.get(targetId) ?? null;
  }

  /** These targets and those of a later read (which win where both have one). */
  with(later: DispatchTargets): DispatchTargets {
    const all = [this, later].flatMap((read) =>
      [...read.byTenant.values()].flatMap((ofTenant) => [...ofTenant.values()]),
    );
    return new DispatchTargets(all);
  }
}

/** The worker's view: the only shape that carries the signing secrets. */
export interface DispatchTarget extends Omit<Target, 'auth'> {
  /** Newest first: the current secret, then a rotated-out one still in its overlap. */
  signingSecrets: string[];
  /** With its secrets. */
  auth: TargetAuth | null;
}

/** POST /targets/{id}/secrets/rotate: the new secret (generated when absent) and the overlap. */
export interface SecretRotation {
  signingSecret?: string;
  /** How long the replaced secret keeps signing beside the new one; 0 drops it at once. */
  overlapSeconds?: number;
}

export interface RotatedSecret {
  target: Target;
  /** Only when dueline generated the secret: shown this once, never again. */
  generatedSecret: string | null;
}

export interface TargetInput {
  name: string;
  kind?: TargetKind;
  url: string;
  method?: TargetMethod;
  headers?: Record<string, string>;
  timeoutMs?: number;
  deduplicates?: boolean;
  signingSecret?: string | null;
  auth?: TargetAuth | null;
  maxConcurrency?: number | null;
  ratePerSecond?: number | null;
}

/**
 * Absent fields stay as they are; `signingSecret: null` removes the secret, a null limit
 * removes it; `status: 'active'` re-enables a disabled target (and forgets its backoff).
 */
export type TargetPatch = Partial<TargetInput> & { status?: TargetStatus };

export interface TargetPage {
  items: Target[];
  /** Null on the last page. */
  nextCursor: string | null;
}
