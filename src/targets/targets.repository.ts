import { Injectable } from '@nestjs/common';
import { SQL_STATE, SqlRunner, sqlFailureOf, type Tx } from '../database';
import { TargetEntity } from './target.entity';
import type { Target, TargetKind, TargetMethod, TargetRef, TargetStatus } from './target';
import type { TargetAuthView } from './target-auth';
import {
  BACK_OFF_TARGET,
  COUNT_SCHEDULES_USING_TARGET,
  DISABLE_TARGET,
  LOCK_TARGET_STATUS,
  DROP_EXPIRED_PREVIOUS_SECRETS,
  LIST_TARGETS_AFTER,
  LIST_TARGETS_FIRST_PAGE,
  LOCK_TARGET_FOR_DELETE,
  LOCK_USABLE_TARGETS,
  ROTATE_SIGNING_SECRET,
  SELECT_STALE_SEALED_SECRETS,
  SELECT_TARGET,
  SELECT_TARGETS_FOR_DISPATCH,
  SOFT_DELETE_UNUSED_TARGET,
  TARGET_COLUMNS,
  WRITE_RESEALED_SECRETS,
} from './targets.sql';

/** Column values as the service has validated and defaulted them. */
export interface TargetValues {
  name: string;
  kind: TargetKind;
  url: string;
  method: TargetMethod;
  headers: Record<string, string>;
  timeoutMs: number;
  deduplicates: boolean;
  signingSecret: string | null;
  previousSigningSecret?: null;
  previousSigningSecretExpiresAt?: null;
  /** Sealed; with its view (both null for none). */
  auth: string | null;
  authView: TargetAuthView | null;
  maxConcurrency: number | null;
  ratePerSecond: number | null;
  status?: TargetStatus;
  disabledReason?: string | null;
  backoffUntil?: null;
}

/** A target's secrets as stored (sealed), for a key rotation. */
export interface SealedSecrets {
  id: string;
  signingSecret: string | null;
  previousSigningSecret: string | null;
  auth: string | null;
}

/** A target as the worker reads it: its secrets still sealed (the service opens them). */
export interface SealedDispatchTarget extends Omit<Target, 'auth'> {
  signingSecrets: string[];
  auth: string | null;
}

export type WriteOutcome = { kind: 'ok'; target: Target } | { kind: 'duplicate_name' };

export type DeleteOutcome =
  { kind: 'deleted' } | { kind: 'not_found' } | { kind: 'in_use'; schedules: number };

interface TargetRow {
  id: string;
  tenant_id: string;
  name: string;
  kind: TargetKind;
  url: string;
  method: TargetMethod;
  headers: Record<string, string>;
  timeout_ms: number;
  deduplicates: boolean;
  has_signing_secret: boolean;
  previous_signing_secret_expires_at: Date | null;
  auth_view: TargetAuthView | null;
  max_concurrency: number | null;
  rate_per_second: number | null;
  status: TargetStatus;
  disabled_reason: string | null;
  backoff_until: Date | null;
  created_at: Date;
  updated_at: Date;
}

const NAME_UNIQUE_CONSTRAINT = 'targets_tenant_id_name_key';

@Injectable()
export class TargetsRepository {
  constructor(private readonly sql: SqlRunner) {}

  async insert(tenantId: string, values: TargetValues): Promise<WriteOutcome> {
    return this.catchDuplicateName(async () => {
      const result = await this.sql
        .manager()
        .createQueryBuilder()
        .insert()
        .into(TargetEntity)
        .values({ tenantId, ...values })
        .returning(TARGET_COLUMNS)
        .execute();
      return { kind: 'ok', target: toTarget((result.raw as TargetRow[])[0]) };
    });
  }

  /** Null when the target does not exist for this tenant (or is deleted). */
  /**
   * The edit, in one transaction with `onDisabled` when it moved the target from active to
   * disabled (its event, see LOCK_TARGET_STATUS).
   */
  async update(
    tenantId: string,
    id: string,
    changes: Partial<TargetValues>,
    onDisabled: (tx: Tx) => Promise<void>,
  ): Promise<WriteOutcome | null> {
    return this.catchDuplicateName(() =>
      this.sql.transaction(async (tx) => {
        const [before] = await this.sql.rows<{ status: string }>(
          LOCK_TARGET_STATUS,
          [tenantId, id],
          tx,
        );
        const outcome = await this.updateIn(tx, tenantId, id, changes);
        if (
          outcome?.kind === 'ok' &&
          before?.status === 'active' &&
          changes.status === 'disabled'
        ) {
          await onDisabled(tx);
        }
        return outcome;
      }),
    );
  }

  private async updateIn(
    tx: Tx,
    tenantId: string,
    id: string,
    changes: Partial<TargetValues>,
  ): Promise<WriteOutcome | null> {
    const result = await this.sql
      .manager(tx)
      .createQueryBuilder()
      .update(TargetEntity)
      .set(changes)
      .where('tenant_id = :tenantId AND id = :id AND deleted_at IS NULL', { tenantId, id })
      .returning(TARGET_COLUMNS)
      .execute();
    const row = (result.raw as TargetRow[])[0];
    return row ? { kind: 'ok', target: toTarget(row) } : null;
  }

  async findById(tenantId: string, id: string): Promise<Target | null> {
    const rows = await this.sql.rows<TargetRow>(SELECT_TARGET, [tenantId, id]);
    return rows[0] ? toTarget(rows[0]) : null;
  }

  /** The live targets among `refs` (each a tenant's target), sealed (see the service). */
  async findManyForDispatch(refs: readonly TargetRef[]): Promise<SealedDispatchTarget[]> {
    const rows = await this.sql.rows<
      TargetRow & {
        signing_secret: string | null;
        previous_signing_secret: string | null;
        auth: string | null;
      }
    >(SELECT_TARGETS_FOR_DISPATCH, [refs.map((r) => r.tenantId), refs.map((r) => r.targetId)]);
    return rows.map((row) => ({
      ...toTarget(row),
      auth: row.auth,
      signingSecrets: [row.signing_secret, row.previous_signing_secret].filter(
        (secret): secret is string => secret !== null,
      ),
    }));
  }

  /** Null when the target does not exist for this tenant (see ROTATE_SIGNING_SECRET). */
  async rotateSigningSecret(
    tenantId: string,
    id: string,
    secret: string,
    overlapSeconds: number,
  ): Promise<Target | null> {
    const rows = await this.sql.rows<TargetRow>(ROTATE_SIGNING_SECRET, [
      tenantId,
      id,
      secret,
      overlapSeconds,
    ]);
    return rows[0] ? toTarget(rows[0]) : null;
  }

  /** Targets with a secret sealed under another key than `currentKeyId` (at most `limit`). */
  async findStaleSealed(currentKeyId: string, limit: number): Promise<SealedSecrets[]> {
    const rows = await this.sql.rows<{
      id: string;
      signing_secret: string | null;
      previous_signing_secret: string | null;
      auth: string | null;
    }>(SELECT_STALE_SEALED_SECRETS, [`enc:v1:${currentKeyId}:%`, limit]);
    return rows.map((row) => ({
      id: row.id,
      signingSecret: row.signing_secret,
      previousSigningSecret: row.previous_signing_secret,
      auth: row.auth,
    }));
  }

  /** See WRITE_RESEALED_SECRETS; returns how many targets were written. */
  writeResealed(
    read: readonly SealedSecrets[],
    resealed: readonly SealedSecrets[],
  ): Promise<number> {
    return this.sql.affected(WRITE_RESEALED_SECRETS, [
      read.map((r) => r.id),
      read.map((r) => r.signingSecret),
      read.map((r) => r.previousSigningSecret),
      read.map((r) => r.auth),
      resealed.map((r) => r.signingSecret),
      resealed.map((r) => r.previousSigningSecret),
      resealed.map((r) => r.auth),
    ]);
  }

  /** See DROP_EXPIRED_PREVIOUS_SECRETS; returns how many targets lost their old secret. */
  dropExpiredPreviousSecrets(limit: number): Promise<number> {
    return this.sql.affected(DROP_EXPIRED_PREVIOUS_SECRETS, [limit]);
  }

  /** True when the target's backoff moved later (see BACK_OFF_TARGET). */
  async backOff(tx: Tx, tenantId: string, id: string, ms: number): Promise<boolean> {
    return (await this.sql.rows(BACK_OFF_TARGET, [tenantId, id, Math.ceil(ms)], tx)).length > 0;
  }

  /** True when the target was active and is now disabled (see DISABLE_TARGET). */
  async disable(tx: Tx, tenantId: string, id: string, reason: string): Promise<boolean> {
    return (await this.sql.rows(DISABLE_TARGET, [tenantId, id, reason], tx)).length > 0;
  }

  /** Up to `limit` targets after the target `afterId`, oldest first. */
  async list(tenantId: string, limit: number, afterId: string | null): Promise<Target[]> {
    const rows = afterId
      ? await this.sql.rows<TargetRow>(LIST_TARGETS_AFTER, [tenantId, limit, afterId])
      : await this.sql.rows<TargetRow>(LIST_TARGETS_FIRST_PAGE, [tenantId, limit]);
    return rows.map(toTarget);
  }

  /** The usable targets among `ids`, each locked against deletion (see LOCK_USABLE_TARGETS). */
  async lockUsable(tenantId: string, ids: readonly string[], tx?: Tx): Promise<Set<string>> {
    const rows = await this.sql.rows<{ id: string }>(LOCK_USABLE_TARGETS, [tenantId, ids], tx);
    return new Set(rows.map((row) => row.id));
  }

  async softDeleteUnused(tenantId: string, id: string): Promise<DeleteOutcome> {
    return this.sql.transaction(async (tx): Promise<DeleteOutcome> => {
      const locked = await this.sql.rows(LOCK_TARGET_FOR_DELETE, [tenantId, id], tx);
      if (locked.length === 0) return { kind: 'not_found' };
      const deleted = await this.sql.rows(SOFT_DELETE_UNUSED_TARGET, [tenantId, id], tx);
      if (deleted.length > 0) return { kind: 'deleted' };
      // We hold the row lock, so the target still exists: only its schedules kept it alive.
      const [{ n }] = await this.sql.rows<{ n: number }>(
        COUNT_SCHEDULES_USING_TARGET,
        [tenantId, id],
        tx,
      );
      return { kind: 'in_use', schedules: n };
    });
  }

  private async catchDuplicateName<T extends WriteOutcome | null>(
    write: () => Promise<T>,
  ): Promise<T | { kind: 'duplicate_name' }> {
    try {
      return await write();
    } catch (error) {
      if (isUniqueViolation(error, NAME_UNIQUE_CONSTRAINT)) return { kind: 'duplicate_name' };
      throw error;
    }
  }
}

function isUniqueViolation(error: unknown, constraint: string): boolean {
  const failure = sqlFailureOf(error);
  return failure?.code === SQL_STATE.uniqueViolation && failure.constraint === constraint;
}

function toTarget(row: TargetRow): Target {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    kind: row.kind,
    url: row.url,
    method: row.method,
    headers: row.headers,
    timeoutMs: row.timeout_ms,
    deduplicates: row.deduplicates,
    hasSigningSecret: row.has_signing_secret,
    previousSecretExpiresAt: row.previous_signing_secret_expires_at,
    auth: row.auth_view,
    maxConcurrency: row.max_concurrency,
    ratePerSecond: row.rate_per_second,
    status: row.status,
    disabledReason: row.disabled_reason,
    backoffUntil: row.backoff_until,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
