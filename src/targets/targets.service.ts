import { Inject, Injectable } from '@nestjs/common';
import {
  ConflictError,
  encodeCursor,
  isUuid,
  NotFoundError,
  pageSize,
  ValidationError,
} from '../common';
import { APP_CONFIG, type AppConfig } from '../config';
import type { Tx } from '../database';
import { EventsService } from '../events';
import { SecretBox } from '../secrets';
import {
  canonicalIp,
  checkTargetUrl,
  generateStandardSecret,
  standardSecretProblem,
} from '../delivery';
import { authView, targetAuthProblems, type TargetAuth } from './target-auth';
import { targetHeaderProblems } from './target-headers';
import {
  DISABLED_BY_REQUEST,
  DispatchTargets,
  RotatedSecret,
  SecretRotation,
  Target,
  TARGET_LIMITS,
  TargetInput,
  TargetPage,
  TargetPatch,
  TargetRef,
} from './target';
import { TargetsRepository, TargetValues, WriteOutcome } from './targets.repository';

/** Signing secrets are sealed at rest (AES-256-GCM, see src/secrets) under this purpose. */
const SECRET = 'target.signing_secret';
/** Auth blocks are sealed whole (credentials with the rest) under this one. */
const AUTH = 'target.auth';

@Injectable()
export class TargetsService {
  constructor(
    private readonly targets: TargetsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly box: SecretBox,
    private readonly events: EventsService,
  ) {}

  async create(tenantId: string, input: TargetInput): Promise<Target> {
    const values: TargetValues = {
      name: input.name,
      kind: input.kind ?? 'http',
      url: this.checkedUrl(input.url),
      method: input.method ?? 'POST',
      headers: checkedHeaders(input.headers ?? {}),
      timeoutMs: input.timeoutMs ?? TARGET_LIMITS.defaultTimeoutMs,
      deduplicates: input.deduplicates ?? false,
      signingSecret: this.sealed(checkedSecret(input.signingSecret ?? null)),
      ...this.authValues(input.auth ?? null),
      maxConcurrency: checkedFlowLimit('maxConcurrency', input.maxConcurrency ?? null),
      ratePerSecond: checkedFlowLimit('ratePerSecond', input.ratePerSecond ?? null),
    };
    return unwrap(await this.targets.insert(tenantId, values), values.name);
  }

  async list(tenantId: string, page: { limit?: number; afterId?: string }): Promise<TargetPage> {
    const limit = pageSize(page.limit);
    const rows = await this.targets.list(tenantId, limit + 1, page.afterId ?? null);
    const items = rows.slice(0, limit);
    return {
      items,
      nextCursor: rows.length > limit ? encodeCursor(items[items.length - 1].id) : null,
    };
  }

  async get(tenantId: string, id: string): Promise<Target> {
    const target = isUuid(id) ? await this.targets.findById(tenantId, id) : null;
    if (!target) throw notFound(id);
    return target;
  }

  /** Absent fields stay; `signingSecret: null` removes the secret; `headers` replaces all. */
  async update(tenantId: string, id: string, patch: TargetPatch): Promise<Target> {
    if (!isUuid(id)) throw notFound(id);
    const changes: Partial<TargetValues> = {};
    if (patch.name !== undefined) changes.name = patch.name;
    if (patch.kind !== undefined) changes.kind = patch.kind;
    if (patch.url !== undefined) changes.url = this.checkedUrl(patch.url);
    if (patch.method !== undefined) changes.method = patch.method;
    if (patch.headers !== undefined) changes.headers = checkedHeaders(patch.headers);
    if (patch.timeoutMs !== undefined) changes.timeoutMs = patch.timeoutMs;
    if (patch.deduplicates !== undefined) changes.deduplicates = patch.deduplicates;
    if (patch.signingSecret !== undefined) {
      // A PATCH replaces the secret at once (and ends any rotation); rotate() overlaps them.
      changes.signingSecret = this.sealed(checkedSecret(patch.signingSecret));
      changes.previousSigningSecret = null;
      changes.previousSigningSecretExpiresAt = null;
    }
    if (patch.auth !== undefined) Object.assign(changes, this.authValues(patch.auth));
    if (patch.maxConcurrency !== undefined) {
      changes.maxConcurrency = checkedFlowLimit('maxConcurrency', patch.maxConcurrency);
    }
    if (patch.ratePerSecond !== undefined) {
      changes.ratePerSecond = checkedFlowLimit('ratePerSecond', patch.ratePerSecond);
    }
    if (patch.status === 'active') {
      // Re-enabled: its runs start again, and a backoff it asked for before is forgotten.
      Object.assign(changes, { status: 'active', disabledReason: null, backoffUntil: null });
    } else if (patch.status === 'disabled') {
      Object.assign(changes, { status: 'disabled', disabledReason: DISABLED_BY_REQUEST });
    }
    if (Object.keys(changes).length === 0) return this.get(tenantId, id);
    const outcome = await this.targets.update(tenantId, id, changes, (tx) =>
      this.events.recordTargetDisabled(tx, tenantId, id),
    );
    if (!outcome) throw notFound(id);
    return unwrap(outcome, changes.name ?? '');
  }

  /**
   * A new signing secret (the caller's, or one generated and returned once); the one it replaces
   * keeps signing beside it for `overlapSeconds`, then is dropped. At most two are ever active.
   */
  async rotateSecret(
    tenantId: string,
    id: string,
    rotation: SecretRotation,
  ): Promise<RotatedSecret> {
    if (!isUuid(id)) throw notFound(id);
    const overlap = rotation.overlapSeconds ?? TARGET_LIMITS.defaultSecretOverlapSeconds;
    if (
      !Number.isInteger(overlap) ||
      overlap < 0 ||
      overlap > TARGET_LIMITS.maxSecretOverlapSeconds
    ) {
      const message = `overlapSeconds must be an integer from 0 to ${TARGET_LIMITS.maxSecretOverlapSeconds}`;
      throw new ValidationError(message, [{ field: 'overlapSeconds', message }]);
    }
    const generatedSecret = rotation.signingSecret === undefined ? generateStandardSecret() : null;
    const secret = checkedSecret(rotation.signingSecret ?? generatedSecret);
    const target = await this.targets.rotateSigningSecret(
      tenantId,
      id,
      this.sealed(secret)!,
      overlap,
    );
    if (!target) throw notFound(id);
    return { target, generatedSecret };
  }

  /**
   * A 429/503 with Retry-After: every run of the target waits `ms` from now (in the
   * completion's transaction `tx`). True when that moved its backoff later.
   */
  backOff(tx: Tx, tenantId: string, targetId: string, ms: number): Promise<boolean> {
    return this.targets.backOff(tx, tenantId, targetId, ms);
  }

  /** A 410 Gone: the target is disabled with `reason` (in `tx`). True when it was active. */
  async disable(tx: Tx, tenantId: string, targetId: string, reason: string): Promise<boolean> {
    const disabled = await this.targets.disable(tx, tenantId, targetId, reason);
    if (disabled) await this.events.recordTargetDisabled(tx, tenantId, targetId);
    return disabled;
  }

  /** Forgets rotated-out secrets past their overlap (the relay calls this every round). */
  dropExpiredSecrets(limit: number): Promise<number> {
    return this.targets.dropExpiredPreviousSecrets(limit);
  }

  /** Soft delete; refused while active or paused schedules use the target. */
  async delete(tenantId: string, id: string): Promise<void> {
    if (!isUuid(id)) throw notFound(id);
    const outcome = await this.targets.softDeleteUnused(tenantId, id);
    switch (outcome.kind) {
      case 'deleted':
        return;
      case 'not_found':
        throw notFound(id);
      case 'in_use':
        throw new ConflictError(
          `target ${id} is used by ${outcome.schedules} active or paused schedule(s); ` +
            'cancel them or point them at another target first',
          { activeSchedules: outcome.schedules },
        );
    }
  }

  /**
   * For the worker only: the live targets that runs (or events) of one or many tenants name, in
   * one read, with their signing secrets; each found only under the tenant that names it. Never
   * pass the result to an API response or a log. A deleted or unknown one is absent: nothing is
   * sent to it any more.
   */
  async getForDispatch(refs: readonly TargetRef[]): Promise<DispatchTargets> {
    const seen = new Set<string>();
    const valid = refs.filter((ref) => {
      const key = `${ref.tenantId}/${ref.targetId}`;
      if (seen.has(key) || !isUuid(ref.tenantId) || !isUuid(ref.targetId)) return false;
      seen.add(key);
      return true;
    });
    if (valid.length === 0) return new DispatchTargets();
    const targets = await this.targets.findManyForDispatch(valid);
    return new DispatchTargets(
      targets.map((target) => ({
        ...target,
        signingSecrets: target.signingSecrets.map((sealed) => this.box.open(sealed, SECRET)),
        auth: target.auth ? (JSON.parse(this.box.open(target.auth, AUTH)) as TargetAuth) : null,
      })),
    );
  }

  /**
   * Re-seals, under the current key, up to `limit` targets' secrets sealed under an older one;
   * returns how many it found (0: none is left). For `npm run secrets:rotate-key`.
   */
  async resealSecrets(limit: number): Promise<number> {
    const stale = await this.targets.findStaleSealed(this.box.currentKeyId, limit);
    if (stale.length === 0) return 0;
    const reseal = (value: string | null) =>
      value === null || !this.box.isStale(value)
        ? value
        : this.box.seal(this.box.open(value, SECRET), SECRET);
    const resealAuth = (value: string | null) =>
      value === null || !this.box.isStale(value)
        ? value
        : this.box.seal(this.box.open(value, AUTH), AUTH);
    await this.targets.writeResealed(
      stale,
      stale.map((row) => ({
        id: row.id,
        signingSecret: reseal(row.signingSecret),
        previousSigningSecret: reseal(row.previousSigningSecret),
        auth: resealAuth(row.auth),
      })),
    );
    return stale.length;
  }

  /**
   * A schedule may only name a live target of its own tenant. Pass the transaction that writes
   * the schedule to make the check hold until it commits: a concurrent DELETE of the target then
   * either sees the schedule (409) or wins first (this throws).
   */
  async assertUsable(tenantId: string, targetId: string, tx?: Tx): Promise<void> {
    const refused = await this.refuseUnusable(tenantId, [targetId], tx);
    const error = refused.get(targetId);
    if (error) throw error;
  }

  /**
   * assertUsable for several targets at once: locks the usable ones the same way and returns
   * the refusal (404) of each other one, by id.
   */
  async refuseUnusable(
    tenantId: string,
    targetIds: readonly string[],
    tx?: Tx,
  ): Promise<Map<string, NotFoundError>> {
    const ids = [...new Set(targetIds)];
    const valid = ids.filter(isUuid);
    const usable =
      valid.length > 0 ? await this.targets.lockUsable(tenantId, valid, tx) : new Set<string>();
    // The database answers ids in lower case; a client may send them in upper case.
    const refused = ids.filter((id) => !usable.has(id.toLowerCase()));
    return new Map(refused.map((id) => [id, notFound(id)]));
  }

  /**
   * A checked auth block, sealed, and its view. A token endpoint is held to the address policy
   * and must be https (it receives the client secret) unless the operator lists its host in
   * TARGET_ALLOWED_HOSTS, i.e. trusts the network it is on.
   */
  private authValues(auth: TargetAuth | null): Pick<TargetValues, 'auth' | 'authView'> {
    if (auth === null) return { auth: null, authView: null };
    const problems = targetAuthProblems(auth);
    if (auth.type === 'oauth2_client_credentials' && problems.length === 0) {
      const check = checkTargetUrl(auth.tokenUrl, this.config.targetAllowedHosts);
      if (!check.ok) {
        problems.push({
          field: 'auth.tokenUrl',
          message: check.reason.replace(/^target /, 'token '),
        });
      } else if (check.url.protocol !== 'https:' && !this.isListedHost(check.url.hostname)) {
        problems.push({
          field: 'auth.tokenUrl',
          message: `auth.tokenUrl must be https (it receives the client secret) unless its host is listed in TARGET_ALLOWED_HOSTS`,
        });
      }
    }
    if (problems.length > 0) {
      throw new ValidationError(problems.map((p) => p.message).join('; '), problems);
    }
    return { auth: this.box.seal(JSON.stringify(auth), AUTH), authView: authView(auth) };
  }

  private isListedHost(hostname: string): boolean {
    const allowed = this.config.targetAllowedHosts;
    const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
    return (
      allowed.names.has(host) ||
      allowed.ips.has(canonicalIp(host) ?? '') ||
      allowed.suffixes.some((suffix) => host.endsWith(suffix))
    );
  }

  private sealed(secret: string | null): string | null {
    return secret === null ? null : this.box.seal(secret, SECRET);
  }

  /**
   * Runs the address policy at registration and stores the URL as the parser normalised it,
   * which is what will be called; that form is checked too, since the invoker checks it again
   * before every call and a URL that only failed then would fail every run.
   */
  private checkedUrl(url: string): string {
    const check = checkTargetUrl(url, this.config.targetAllowedHosts);
    const normalised = check.ok
      ? checkTargetUrl(check.url.href, this.config.targetAllowedHosts)
      : check;
    if (!normalised.ok) {
      throw new ValidationError(normalised.reason, [{ field: 'url', message: normalised.reason }]);
    }
    return normalised.url.href;
  }
}

/** A secret must be in the Standard Webhooks form; the problem never repeats it. */
function checkedSecret(secret: string | null): string | null {
  if (secret === null) return null;
  const problem = standardSecretProblem(secret);
  if (problem) {
    throw new ValidationError(`signingSecret ${problem}`, [
      { field: 'signingSecret', message: `signingSecret ${problem}` },
    ]);
  }
  return secret;
}

function checkedHeaders(headers: Record<string, string>): Record<string, string> {
  const problems = targetHeaderProblems(headers);
  if (problems.length > 0) {
    throw new ValidationError(
      problems.join('; '),
      problems.map((message) => ({ field: 'headers', message })),
    );
  }
  return { ...headers };
}

function notFound(id: string): NotFoundError {
  // A malformed id is echoed truncated: the detail must not become a reflection channel.
  return new NotFoundError('target', id.slice(0, 64));
}

function unwrap(outcome: WriteOutcome | { kind: 'duplicate_name' }, name: string): Target {
  if (outcome.kind === 'ok') return outcome.target;
  throw new ConflictError(`a target named ${JSON.stringify(name)} already exists`);
}

/** maxConcurrency / ratePerSecond: null (no limit) or an integer within the tenant quotas' bounds. */
function checkedFlowLimit(field: string, value: number | null): number | null {
  if (value === null) return null;
  const { minFlowLimit, maxFlowLimit } = TARGET_LIMITS;
  if (!Number.isInteger(value) || value < minFlowLimit || value > maxFlowLimit) {
    const message = `${field} must be null or an integer from ${minFlowLimit} to ${maxFlowLimit}`;
    throw new ValidationError(message, [{ field, message }]);
  }
  return value;
}
