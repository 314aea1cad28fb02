import { Injectable } from '@nestjs/common';
import { CalendarsService } from '../calendars';
import {
  Batcher,
  canonicalSha256,
  Clock,
  DomainError,
  IdempotencyKeyReusedError,
  NotFoundError,
  QuotaExceededError,
  timeOrderedUuid,
  ValidationError,
} from '../common';
import { Transactions, type Tx } from '../database';
import { DueIndexRepository } from '../due-index';
import { LoadProfileService, LoadProjections, type LoadContribution } from '../load-profile';
import { TargetsService } from '../targets';
import type { Tenant } from '../tenants';
import type { Schedule, ScheduleDefinition } from './schedule';
import { buildDefinition, FiringChecks, nextDueAfter, ScheduleInput } from './schedule-definition';
import { plannedFireAt } from './fire-window';
import { loadSourceOf } from './schedule-load';
import { ScheduleQuotaRepository } from './schedule-quota.repository';
import type { Actor } from './schedule-revision';
import { SchedulesRepository } from './schedules.repository';

/** One schedule to create: the client's key, the body as sent (for its hash) and the input. */
export interface CreateRequest {
  idempotencyKey: string;
  requestBody: unknown;
  input: ScheduleInput;
  /** Who creates it: revision 1 records it. */
  actor: Actor;
  /** The W3C traceparent of the create's span (tracing on), kept to link its runs to it. */
  traceParent?: string | null;
}

/** Each request's answer: the schedule (`created` false for a replay) or why it was refused. */
export type CreateOutcome =
  | { schedule: Schedule; created: boolean; error?: never }
  | { error: DomainError; schedule?: never };

interface Gathered {
  tenant: Tenant;
  request: CreateRequest;
}

interface Prepared {
  index: number;
  /** Who creates it (revision 1's author, kept on the row). */
  createdByApiKeyId: string | null;
  key: string;
  requestSha256: Buffer;
  id: string;
  definition: ScheduleDefinition;
  nextDueAt: Date | null;
  /** What it will add to the tenant's projected load. */
  load: LoadContribution | null;
  traceParent: string | null;
}

/** Single creates of one tenant that arrive together share a transaction, up to this many. */
const MAX_GATHERED = 100;

/**
 * Creates schedules, one or a batch, in one transaction and a fixed number of statements
 * whatever their number, each request atomic on its own: a refused one writes nothing (its
 * Idempotency-Key claim is given back), the others commit. The 201 is sent after the commit.
 */
@Injectable()
export class ScheduleCreator {
  /**
   * Per tenant, the single creates that arrive while one of its transactions is in flight are
   * gathered into the next (two with one Idempotency-Key never share one): a create costs a
   * share of a transaction instead of one each, and one tenant's creates take its quota row one
   * transaction at a time instead of queueing on it.
   */
  private readonly gatherers = new Map<string, Batcher<Gathered, CreateOutcome>>();
  /** Recurrences surveyed by earlier creates, still exact until their next instant. */
  private readonly firingChecks = new FiringChecks();

  constructor(
    private readonly schedules: SchedulesRepository,
    private readonly quota: ScheduleQuotaRepository,
    private readonly transactions: Transactions,
    private readonly dueIndex: DueIndexRepository,
    private readonly targets: TargetsService,
    private readonly calendars: CalendarsService,
    private readonly load: LoadProfileService,
    private readonly clock: Clock,
  ) {}

  /** One create, in a transaction with the other creates of its tenant arriving meanwhile. */
  async createOne(tenant: Tenant, request: CreateRequest): Promise<CreateOutcome> {
    let gatherer = this.gatherers.get(tenant.id);
    if (!gatherer) {
      gatherer = new Batcher(
        (batch: Gathered[]) =>
          this.create(
            batch[0].tenant,
            batch.map((g) => g.request),
          ),
        { maxBatch: MAX_GATHERED, idOf: (g) => g.request.idempotencyKey },
      );
      this.gatherers.set(tenant.id, gatherer);
    }
    try {
      return await gatherer.submit({ tenant, request });
    } finally {
      if (gatherer.idle && this.gatherers.get(tenant.id) === gatherer) {
        this.gatherers.delete(tenant.id);
      }
    }
  }

  async create(tenant: Tenant, requests: readonly CreateRequest[]): Promise<CreateOutcome[]> {
    if (new Set(requests.map((r) => r.idempotencyKey)).size !== requests.length) {
      throw new ValidationError('each item of a batch needs an Idempotency-Key of its own');
    }
    const outcomes = new Array<CreateOutcome>(requests.length);
    const resolved = await this.withCalendars(tenant.id, requests, outcomes);
    const prepared = this.prepare(resolved, outcomes);
    if (prepared.length > 0) {
      await this.transactions.run((tx) => this.write(tx, tenant, prepared, outcomes));
    }
    return outcomes;
  }

  /**
   * Gives each request that names a calendar the calendar's dates (one read for the batch;
   * calendars never change, so reading them before the transaction is exact). A request naming
   * a calendar the tenant does not have is refused (404) and left out (null).
   */
  private async withCalendars(
    tenantId: string,
    requests: readonly CreateRequest[],
    outcomes: CreateOutcome[],
  ): Promise<(CreateRequest | null)[]> {
    const ids = requests.map((r) => r.input.calendarId).filter((id): id is string => id != null);
    if (ids.length === 0) return [...requests];
    const dates = await this.calendars.datesOf(tenantId, ids);
    return requests.map((request, index) => {
      const calendarId = request.input.calendarId;
      // Both a list and a calendar: the definition refuses it (400) before any lookup.
      if (calendarId == null || (request.input.excludeDates?.length ?? 0) > 0) return request;
      const calendarDates = dates.get(calendarId);
      if (calendarDates) return { ...request, input: { ...request.input, calendarDates } };
      outcomes[index] = { error: new NotFoundError('calendar', calendarId) };
      return null;
    });
  }

  /** Validates each definition (with one `now`); an invalid one is refused before any SQL. */
  private prepare(
    requests: readonly (CreateRequest | null)[],
    outcomes: CreateOutcome[],
  ): Prepared[] {
    const now = this.clock.now();
    const loads = new LoadProjections(now);
    const prepared: Prepared[] = [];
    requests.forEach((request, index) => {
      if (request === null) return;
      try {
        const definition = buildDefinition(request.input, now, this.firingChecks);
        prepared.push({
          index,
          createdByApiKeyId: request.actor.apiKeyId,
          key: request.idempotencyKey,
          requestSha256: canonicalSha256(request.requestBody),
          id: timeOrderedUuid(),
          definition,
          nextDueAt: nextDueAfter(definition, now, this.firingChecks),
          load: loads.of(loadSourceOf(definition)),
          traceParent: request.traceParent ?? null,
        });
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        outcomes[index] = { error };
      }
    });
    return prepared;
  }

  /**
   * Keys first (a replay answers from its key, whatever became of the target since), then the
   * targets and the rows, and the tenant's budgets last: its load profile's lock and its counter
   * row are held from there to the commit only, so the creates of one tenant queue on them for
   * about a commit each, not for the inserts of a whole batch. New rows are seen by nobody
   * before the commit, so a create the budgets refuse is taken back in the same transaction.
   */
  private async write(
    tx: Tx,
    tenant: Tenant,
    prepared: readonly Prepared[],
    outcomes: CreateOutcome[],
  ): Promise<void> {
    const claimed = await this.schedules.claimIdempotencyKeys(
      tx,
      tenant.id,
      prepared.map((p) => ({ key: p.key, requestSha256: p.requestSha256, scheduleId: p.id })),
    );
    await this.replay(
      tx,
      tenant.id,
      prepared.filter((p) => !claimed.has(p.key)),
      outcomes,
    );
    const fresh = prepared.filter((p) => claimed.has(p.key));
    const refusedTargets = await this.targets.refuseUnusable(
      tenant.id,
      fresh.map((p) => p.definition.targetId),
      tx,
    );
    const usable: Prepared[] = [];
    const unusable: string[] = [];
    for (const p of fresh) {
      const error = refusedTargets.get(p.definition.targetId);
      if (error) {
        outcomes[p.index] = { error };
        unusable.push(p.key);
      } else usable.push(p);
    }
    await this.schedules.forgetIdempotencyKeys(tx, tenant.id, unusable);
    if (usable.length === 0) return;
    const inserted = await this.insertRows(tx, tenant.id, usable);
    // The projected load, checked in request order: a create that would overload a minute of
    // the tenant is refused (422) like a refused target, and the others still commit.
    const overloads = await this.load.replace(
      tx,
      tenant.id,
      usable.map((p) => ({ scheduleId: p.id, load: p.load })),
      { fresh: true },
    );
    const pending: Prepared[] = [];
    const overloaded: Prepared[] = [];
    usable.forEach((p, i) => {
      const error = overloads[i];
      if (error) {
        outcomes[p.index] = { error };
        overloaded.push(p);
      } else pending.push(p);
    });
    await this.takeBack(tx, tenant.id, overloaded);
    const admitted = await this.admit(tx, tenant, pending);
    const max = tenant.quotas.maxActiveSchedules;
    pending.forEach((p, i) => {
      outcomes[p.index] =
        i < admitted
          ? { schedule: inserted.get(p.id)!, created: true }
          : { error: new QuotaExceededError('maxActiveSchedules', max) };
    });
  }

  /**
   * The schedules and their first due entries. Each row records who created it: it is the
   * schedule's revision 1 until its first edit writes that revision into the history.
   */
  private async insertRows(
    tx: Tx,
    tenantId: string,
    schedules: readonly Prepared[],
  ): Promise<Map<string, Schedule>> {
    const inserted = await this.schedules.insertMany(tx, tenantId, schedules);
    await this.dueIndex.add(
      tx,
      schedules
        .filter((p) => p.nextDueAt)
        .map((p) => ({
          scheduleId: p.id,
          tenantId,
          revision: 1,
          dueAt: plannedFireAt(p.id, p.nextDueAt!, p.definition.flexibleWindowSeconds),
        })),
    );
    return new Map(inserted.map((s) => [s.id, s]));
  }

  /**
   * Takes back schedules this transaction inserted and then refused, with their due entries,
   * their load (none was added for an overloaded one: releasing nothing is harmless) and their
   * Idempotency-Key claims.
   */
  private async takeBack(tx: Tx, tenantId: string, refused: readonly Prepared[]): Promise<void> {
    if (refused.length === 0) return;
    const ids = refused.map((p) => p.id);
    await this.load.release(tx, ids);
    await this.dueIndex.removeMany(tx, ids);
    await this.schedules.deleteNew(tx, tenantId, ids);
    await this.schedules.forgetIdempotencyKeys(
      tx,
      tenantId,
      refused.map((p) => p.key),
    );
  }

  /**
   * Keys an earlier request holds (committed, or waited for by the claim): the same body replays
   * that request's schedule, another body is refused (422).
   */
  private async replay(
    tx: Tx,
    tenantId: string,
    taken: readonly Prepared[],
    outcomes: CreateOutcome[],
  ): Promise<void> {
    if (taken.length === 0) return;
    const keys = await this.schedules.readIdempotencyKeys(
      tx,
      tenantId,
      taken.map((p) => p.key),
    );
    const scheduleOf = (p: Prepared) => {
      const stored = keys.get(p.key);
      return stored?.requestSha256.equals(p.requestSha256) ? stored.scheduleId : null;
    };
    const ids = taken.map(scheduleOf).filter((id): id is string => id !== null);
    const schedules = await this.schedules.findByIds(tenantId, ids, tx);
    for (const p of taken) {
      const schedule = schedules.get(scheduleOf(p) ?? '');
      outcomes[p.index] = schedule
        ? { schedule, created: false }
        : { error: new IdempotencyKeyReusedError() };
    }
  }

  /**
   * Takes the quota for the pending schedules, all at once when they fit (the usual case, one
   * statement); else as many as fit, in request order, and takes back the rest (403 each).
   * Returns how many of `pending`, from the first, were admitted.
   */
  private async admit(tx: Tx, tenant: Tenant, pending: readonly Prepared[]): Promise<number> {
    const max = tenant.quotas.maxActiveSchedules;
    if (await this.quota.admit(tx, tenant.id, pending.length, max)) return pending.length;
    const room = Math.max(0, max - (await this.quota.lockCount(tx, tenant.id)));
    const admitted = Math.min(room, pending.length);
    if (admitted > 0 && !(await this.quota.admit(tx, tenant.id, admitted, max))) {
      throw new Error('the schedule count changed under its lock');
    }
    await this.takeBack(tx, tenant.id, pending.slice(admitted));
    return admitted;
  }
}
