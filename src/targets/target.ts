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
} as const;

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
  createdAt: Date;
  updatedAt: Date;
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
}

/** Absent fields stay as they are; `signingSecret: null` removes the secret. */
export type TargetPatch = Partial<TargetInput>;

export interface TargetPage {
  items: Target[];
  /** Null on the last page. */
  nextCursor: string | null;
}
