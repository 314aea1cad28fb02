import { linkTo, SpanKind, startRootSpan, traceparentOf } from '../tracing';
import { Injectable } from '@nestjs/common';
import { AdmissionService } from '../admission';
import { Transactions, type Tx } from '../database';
import { RunHandoff, type PendingHandoff } from '../handoff';
import {
  DueIndexRepository,
  type ClaimedDueBatch,
  type ClaimedDueEntry,
  type CrowdedInstant,
  type CrowdedInstantLook,
  type DueEntry,
} from '../due-index';
import { OccurrencesService } from '../occurrences';
import { allowsConcurrentRuns, OverlapService } from '../overlap';
import type { RunReason } from '../run-vocabulary';
import { SchedulesService, type ScheduleAdvance } from '../schedules';
import { DatabaseClockRepository } from './database-clock.repository';
import { planDispatch, PlannedOccurrence } from './dispatch-plan';

export interface DispatchResult {
  /** Due entries this batch took (dispatched or dropped); a full batch means "drain again". */
  entries: number;
  /**
   * The latest due instant an oldest-first batch took, exact (its last entry); null when it took
   * none, and for the fresh lane's batches (newest first), which no backlog follows.
   */
  lastDueAtExact: string | null;
  dropped: number;
  created: Array<{ state: string; reason: RunReason | null; scheduledAt: Date }>;
  published: number;
  /**
   * The instant due-ness was decided at: the database clock of the transaction, or the later
   * instant a batch prepared ahead was committed at (after the database clock reached it). Null
   * when the batch took nothing: nothing was decided, and the clock is not asked for.
   */
  now: Date | null;
}

export interface DispatchOptions {
  /** Prepare the batch of an instant this far ahead, and commit it at the instant. */
  lookaheadMs?: number;
  /** The instant the crowded-instant lane is preparing: none of its entries (see claimDue). */
  crowded?: string | null;
  /** An instant a batch prepared ahead is waiting for: look only past it (see claimDue). */
  after?: string | null;
  /**
   * The fresh lane beside a backlog: take only entries later than this instant (the last a
   * backlog's batch took), newest first, with the lookahead and `after` as above (see
   * claimFresh).
   */
  freshAfter?: string;
  /**
   * The crowded-instant lane: take only entries due at exactly this instant (text to the
   * microsecond) and commit at it (see claimInstant). Lookahead and `after` do not apply.
   */
  instant?: string;
  /** Called when the batch is prepared and starts waiting for its instant. */
  onWaiting?: (batch: { instant: string; full: boolean }) => void;
  /**
   * Awaited just before admission, which takes the batch's tenants' permit locks and holds them
   * to the commit: a batch prepared long ahead (the crowded-instant lane's) waits here so that
   * it holds them only for the rest of its preparation, not for the whole lead.
   */
  beforeAdmission?: () => Promise<void>;
  /** Test hook: runs just before the commit. */
  beforeCommit?: () => Promise<void>;
}

/**
 * Turns due-index entries into occurrences, ONE transaction per batch: lock the due entries and
 * their schedules, insert the occurrences (unique, ON CONFLICT DO NOTHING), advance each
 * schedule and its entry, and admit the runs ready to go (their queue jobs are written for
 * those their tenants can afford now; the rest wait in the ledger for the admitter). Either all of it commits or
 * none, so an occurrence is never lost between ledger and queue, and a crash at any point leaves
 * the entry due for the next poller.
 *
 * With a lookahead, a batch for an instant a few milliseconds away is prepared ahead and held
 * open until the database clock reaches the instant, then committed: the work of dispatch is
 * off the critical path, and nothing (run, job) is visible before it is due. Holding the batch
 * keeps its schedules locked, so an edit in that window waits for the commit and takes effect
 * after the instant, exactly as if it had arrived just after it.
 */
@Injectable()
export class DueDispatcher {
  constructor(
    private readonly transactions: Transactions,
    private readonly clock: DatabaseClockRepository,
    private readonly dueIndex: DueIndexRepository,
    private readonly schedules: SchedulesService,
    private readonly overlap: OverlapService,
    private readonly occurrences: OccurrencesService,
    private readonly admission: AdmissionService,
    private readonly handoff: RunHandoff,
  ) {}

  async dispatch(
    shards: readonly number[],
    batchSize: number,
    options: DispatchOptions = {},
  ): Promise<DispatchResult> {
    // Jobs written for a worker beside this poller: given to it once (and only if) they commit.
    const handing: { pending: PendingHandoff | null } = { pending: null };
    const result = await this.transactions.run(async (tx) => {
      const { entries, horizon, transactionNow } = await this.claim(tx, shards, batchSize, options);
      const result: DispatchResult = {
        entries: entries.length,
        lastDueAtExact:
          options.freshAfter === undefined && options.instant === undefined
            ? (entries.at(-1)?.dueAtExact ?? null)
            : null,
        dropped: 0,
        created: [],
        published: 0,
        now: null,
      };
      // The claim's rows carry the transaction's clock; none came back when it took nothing (the
      // round's usual last look), and nothing to plan needs the clock then.
      if (transactionNow === null) return result;
      // Plan as of the instant the batch commits at: the horizon (the transaction's clock unless
      // the batch was prepared ahead for a later instant).
      const now: Date = horizon && horizon.at > transactionNow ? horizon.at : transactionNow;
      result.now = now;
      const ids = [...new Set(entries.map((e) => e.scheduleId))];
      const schedules = await this.schedules.lockForDispatch(tx, ids);
      // What is active matters only where the policy keeps runs apart: under `allow` a new run
      // queues whatever else is running (planNewRun), so those schedules cost no read.
      const keptApart = ids.filter((id) => {
        const schedule = schedules.get(id);
        return schedule !== undefined && !allowsConcurrentRuns(schedule.overlapPolicy);
      });
      const active = await this.overlap.activeRuns(tx, keptApart);
      const planned: PlannedOccurrence[] = [];
      const taken: ClaimedDueEntry[] = [];
      const advanced: ScheduleAdvance[] = [];
      const nextEntries: DueEntry[] = [];
      for (const entry of entries) {
        const schedule = schedules.get(entry.scheduleId);
        if (!schedule) continue; // being edited: that edit rewrites or keeps its entry
        taken.push(entry);
        if (schedule.revision !== entry.revision || schedule.status !== 'active') {
          // A stale hint: an old revision, or a paused or cancelled schedule. Never dispatched.
          result.dropped++;
          continue;
        }
        const runs = active.get(schedule.id) ?? { active: false, waiting: 0 };
        const plan = planDispatch(schedule, entry.dueAt, now, runs);
        planned.push(...plan.occurrences);
        active.set(schedule.id, {
          active: runs.active || plan.occurrences.some((o) => o.publish),
          waiting:
            runs.waiting +
            plan.occurrences.filter((o) => o.reason === 'waiting_for_previous').length,
        });
        advanced.push({
          id: schedule.id,
          revision: schedule.revision,
          nextDueAt: plan.nextDueAt,
          status: plan.status,
          runsCreated: plan.runsCreated,
        });
        if (plan.nextDueAt) {
          nextEntries.push({
            scheduleId: schedule.id,
            tenantId: schedule.tenantId,
            revision: schedule.revision,
            dueAt: plan.nextFiresAt ?? plan.nextDueAt,
          });
        }
      }
      // A handful of set-based statements per batch, whatever its size. These three need nothing
      // of each other's answers (every row they touch is locked by this batch already): written
      // together, they cost one wait, and admission's statements go with them.
      const moved = Promise.all([
        this.dueIndex.drop(tx, taken),
        this.schedules.advanceAfterDispatch(tx, advanced),
        this.dueIndex.add(tx, nextEntries),
      ]);
      moved.catch(() => undefined); // awaited below, after admission's statements are written
      // Admission decided before the insert, so each run's row is written once, admitted or
      // waiting for its tenant's budget. Before the wait for the instant: its statements (and
      // the jobs' insert) stay off the critical path. The tenants' permit locks it takes are
      // then held through the wait; only admission queues on them (another batch's, the
      // admitter, a claim of a run that was not admitted), never the claim of an admitted run.
      // It reads none of the rows the moves above write.
      const ready = planned.filter((o) => o.publish);
      await options.beforeAdmission?.();
      const [[, completed]] = await Promise.all([moved, this.admission.decideNew(tx, ready)]);
      for (const run of ready) run.publish = run.admitted === true;
      // Each run's trace starts here (tracing on), linked to the request that created its
      // schedule; the run keeps the span's traceparent for the claim, the call, the completion.
      const dispatchSpans = planned.map((o) => {
        const span = startRootSpan('run.dispatch', {
          kind: SpanKind.PRODUCER,
          links: linkTo(schedules.get(o.scheduleId)?.traceParent),
          attributes: {
            'dueline.schedule_id': o.scheduleId,
            'dueline.scheduled_at': o.scheduledAt.toISOString(),
          },
        });
        o.traceParent = traceparentOf(span);
        return span;
      });
      const inserted = await this.occurrences.insert(tx, planned);
      const spanOf = new Map(
        planned.map((o, i) => [`${o.scheduleId}@${o.scheduledAt.getTime()}`, dispatchSpans[i]]),
      );
      for (const row of inserted) {
        spanOf.get(`${row.scheduleId}@${row.scheduledAt.getTime()}`)?.setAttributes({
          'dueline.run_id': row.id,
          'dueline.state': row.state,
        });
      }
      for (const span of dispatchSpans) span.end();
      const byKey = new Map(planned.map((o) => [`${o.scheduleId}@${o.scheduledAt.getTime()}`, o]));
      const jobs = inserted.flatMap((row) => {
        const run = byKey.get(`${row.scheduleId}@${row.scheduledAt.getTime()}`);
        return run?.publish
          ? [
              {
                runId: row.id,
                tenantId: row.tenantId,
                scheduledAt: row.scheduledAt,
                priority: run.priority,
                targetId: schedules.get(row.scheduleId)?.targetId,
              },
            ]
          : [];
      });
      // The jobs and the tokens are written before the wait for the instant, in its wait.
      const published = this.admission.admitted(tx, jobs, true).then((pending) => {
        handing.pending = pending;
      });
      published.catch(() => undefined); // awaited with the wait, or alone
      const admitted = jobs.length;
      if (horizon && horizon.at > transactionNow) {
        options.onWaiting?.({ instant: horizon.exact, full: entries.length >= batchSize });
        await Promise.all([published, this.dueIndex.waitUntil(tx, horizon.exact)]);
      } else await published;
      await options.beforeCommit?.();
      // Completed schedules give their quota slots back last: the tenants' counters, which every
      // create of those tenants needs, are then locked only from here to the commit, which is
      // written behind them (the transaction's last statements: one wait for both).
      this.schedules.releaseSlots(tx, completed);
      result.created = inserted.map((row) => ({
        state: row.state,
        reason: byKey.get(`${row.scheduleId}@${row.scheduledAt.getTime()}`)?.reason ?? null,
        scheduledAt: row.scheduledAt,
      }));
      result.published = admitted;
      return result;
    });
    this.handoff.deliver(handing.pending);
    return result;
  }

  /** The entries a batch takes: oldest first, the fresh lane's, or one instant's. */
  private claim(
    tx: Tx,
    shards: readonly number[],
    batchSize: number,
    options: DispatchOptions,
  ): Promise<ClaimedDueBatch> {
    if (options.instant !== undefined) {
      return this.dueIndex.claimInstant(tx, shards, options.instant, batchSize);
    }
    const lookaheadMs = options.lookaheadMs ?? 0;
    const after = options.after ?? null;
    return options.freshAfter === undefined
      ? this.dueIndex.claimDue(tx, shards, batchSize, lookaheadMs, after, options.crowded ?? null)
      : this.dueIndex.claimFresh(tx, shards, options.freshAfter, batchSize, lookaheadMs, after);
  }

  /** The earliest due instant in the given shards (for the wake-up timer). */
  nextDue(shards: readonly number[]): Promise<Date | null> {
    return this.dueIndex.nextDueIn(shards);
  }

  /** The crowded-instant lane's look ahead (see DueIndexRepository.nextCrowdedInstant). */
  nextCrowdedInstant(
    shards: readonly number[],
    look: CrowdedInstantLook,
  ): Promise<CrowdedInstant | null> {
    return this.dueIndex.nextCrowdedInstant(shards, look);
  }

  /**
   * Ms until the earliest entry later than `after` is due (0: now), null when none; future
   * entries up to `prepared` (a batch waits for that instant) are left out.
   */
  nextFreshDueInMs(
    shards: readonly number[],
    after: string,
    prepared: string | null,
  ): Promise<number | null> {
    return this.dueIndex.nextFreshDueInMs(shards, after, prepared);
  }

  /** The database clock, for skew measurement. */
  databaseNow(): Promise<Date> {
    return this.clock.now();
  }
}
