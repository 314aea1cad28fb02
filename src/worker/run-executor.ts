import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { AdmissionService, type Claim } from '../admission';
import { Batcher, Clock, errorSummary } from '../common';
import { APP_CONFIG, type AppConfig } from '../config';
import { classifyOutcome, invokeTarget, TargetConnections } from '../delivery';
import {
  ExecutionService,
  type AttemptReport,
  type Completion,
  type CompletionResult,
} from '../execution';
import { Lifecycle } from '../observability';
import type { RunJob } from '../queue';
import { OccurrencesService } from '../occurrences';
import { TargetsService, type DispatchTarget, type DispatchTargets } from '../targets';
import {
  contextOf,
  inSpan,
  markError,
  propagationHeaders,
  SpanKind,
  startSpan,
  traceIdOf,
  tracingActive,
} from '../tracing';
import { LeaseKeeper } from './lease-keeper';
import { TargetCredentials } from './target-credentials';
import { WorkerSlots, type WorkerLane } from './worker-slots';

interface HeldClaim {
  claim: Claim;
  /** performance.now() when its claim was sent: the lease cannot have started before. */
  claimSentAt: number;
  /** Wall clock when it was sent and answered, for the claim's span. */
  claimSentAtMs: number;
  claimedAtMs: number;
}

/**
 * The runs of a batch of queue jobs, start to end: claim them (receipt is not ownership), keep
 * each lease while its target is called, report each outcome under its fence. A run that cannot
 * be claimed is left without calling anything.
 */
@Injectable()
export class RunExecutor {
  private readonly logger = new Logger(RunExecutor.name);
  readonly workerId = `worker:${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly completions: Batcher<Completion, CompletionResult>;
  /**
   * Fast claims, gathered: the fetch loop's batch and anything else claimed at the same moment
   * go in one claimBatch, so the tenants' permit locks are taken once per batch rather than
   * queued for one behind another; what comes while one is in flight goes in another beside it
   * (up to WORKER_CLAIMS_IN_FLIGHT), not behind it. Null: not taken (the caller claims it alone
   * to learn why).
   */
  private readonly claims: Batcher<RunJob, Claim | null>;
  /** Attempts in flight (a stop waits for them). */
  private readonly attempts = new Set<Promise<void>>();
  /** This worker's slots: taken by the callers of start(), given back here. */
  readonly slots: WorkerSlots;
  /** Reused only for targets that deduplicate (see TargetConnections). */
  private readonly connections = new TargetConnections();

  constructor(
    private readonly admission: AdmissionService,
    private readonly execution: ExecutionService,
    private readonly targets: TargetsService,
    private readonly lifecycle: Lifecycle,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly credentials: TargetCredentials,
    private readonly runs: OccurrencesService,
  ) {
    this.claims = new Batcher(
      async (runs: RunJob[]) => {
        const claims = await this.admission.claimBatch(runs, this.workerId);
        const byRun = new Map(claims.map((claim) => [claim.runId, claim]));
        return runs.map((run) => byRun.get(run.runId) ?? null);
      },
      {
        maxBatch: config.worker.claimBatchSize,
        idOf: (run) => run.runId,
        maxInFlight: config.worker.claimsInFlight,
      },
    );
    this.completions = new Batcher((batch) => this.execution.completeMany(batch), {
      maxBatch: config.worker.completionBatchSize,
      idOf: (completion) => completion.runId,
      lingerMs: config.worker.writeLingerMs,
    });
    this.slots = new WorkerSlots(config.worker);
  }

  /**
   * Claims the runs in one statement where it can (claimBatch, shared with whatever else this
   * process is claiming at the moment), the rest one by one (claim, which refuses with a reason
   * and requeues what must wait), and starts an attempt for every claimed run. Resolves once the
   * claims are made, not when the attempts end: from its claim on, a run is the ledger's (its
   * lease, the sweeper), so its queue job has done its work and can be acknowledged while the
   * attempt runs. `onWake` gets the delay after which a requeued or retried run becomes due.
   * Throws (so the queue delivers the jobs again) only if a claim could not reach the database;
   * runs claimed meanwhile still run.
   *
   * The caller has taken a slot of `lane` for every run (slots.take): each claimed run's attempt
   * keeps its slot until it ends; the slots of runs not claimed are given back here.
   */
  async start(
    runs: readonly RunJob[],
    onWake: (inMs: number) => void,
    lane: WorkerLane,
  ): Promise<void> {
    let attempting = 0;
    try {
      const failures: unknown[] = [];
      const claimSentAt = performance.now();
      const claimSentAtMs = Date.now();
      // The targets the jobs name are read while the claims are made, not after them.
      const early = this.readNamedTargets(runs);
      // Each submit joins whatever this process is claiming at the moment (see `claims`).
      const fast = await Promise.allSettled(runs.map((run) => this.claims.submit(run)));
      const held: HeldClaim[] = [];
      const rest: RunJob[] = [];
      fast.forEach((result, i) => {
        if (result.status === 'rejected') failures.push(result.reason);
        else if (result.value) {
          held.push({ claim: result.value, claimSentAt, claimSentAtMs, claimedAtMs: Date.now() });
        } else rest.push(runs[i]);
      });
      attempting += this.attemptAll(held, onWake, lane, early);
      const alone = await Promise.all(
        rest.map((run) =>
          this.claimAlone(run, onWake).catch((error: unknown) => {
            failures.push(error);
            return null;
          }),
        ),
      );
      attempting += this.attemptAll(
        alone.filter((h): h is HeldClaim => h !== null),
        onWake,
        lane,
        early,
      );
      if (failures.length > 0) throw failures[0];
    } finally {
      this.slots.release(lane, runs.length - attempting);
    }
  }

  /**
   * Starts the attempts of claimed runs, each in the slot its claim was sent in; returns how
   * many. Their targets (of every tenant at once: one read for the batch, or none when the early
   * read has them) load beside the attempts, not before the claims resolve: the fetch loop goes
   * on to its next batch meanwhile.
   */
  private attemptAll(
    held: readonly HeldClaim[],
    onWake: (inMs: number) => void,
    lane: WorkerLane,
    early: EarlyTargetsRead | null,
  ): number {
    if (held.length === 0) return 0;
    const context = this.dispatchContext(held, early);
    for (const h of held) {
      const attempt = context.then(({ targets, traces }) =>
        this.run(h, targets, traces.get(h.claim.runId)),
      );
      this.track(attempt, onWake, lane);
    }
    return held.length;
  }

  /**
   * What the attempts of claimed runs need: their targets (one read; a failure is
   * TargetsUnavailable, which ends each attempt retryable without a call) and, only when spans
   * are recorded, the runs' traces (per tenant; a failure costs the spans, never the run).
   * Never rejects.
   */
  private async dispatchContext(
    held: readonly HeldClaim[],
    early: EarlyTargetsRead | null,
  ): Promise<{
    targets: DispatchTargets | TargetsUnavailable;
    traces: Map<string, string>;
  }> {
    const [targets, traces] = await Promise.all([
      this.targetsOfClaims(held, early),
      tracingActive() ? this.traceParents(held) : Promise.resolve(new Map<string, string>()),
    ]);
    return { targets, traces };
  }

  /**
   * The targets the jobs name (RunJob.targetId, their runs' targets when published), read while
   * the claims are made: the attempts of a batch then start as soon as its claims return, one
   * round trip sooner. Null when no job names one (jobs of an older version).
   */
  private readNamedTargets(runs: readonly RunJob[]): EarlyTargetsRead | null {
    const named = runs.flatMap((run) =>
      run.targetId ? [{ tenantId: run.tenantId, targetId: run.targetId }] : [],
    );
    if (named.length === 0) return null;
    return { asked: new Set(named.map(targetKey)), answer: this.readTargets(named) };
  }

  /**
   * The targets the claims call: each is the claim's (the schedule's target at the claim), taken
   * from the early read where it asked for that target; the rest (a schedule moved to another
   * target since the job was published, a job that named none) are read now. An early read that
   * failed is made again now, as if it had not been tried.
   */
  private async targetsOfClaims(
    held: readonly HeldClaim[],
    early: EarlyTargetsRead | null,
  ): Promise<DispatchTargets | TargetsUnavailable> {
    const wanted = held.map(({ claim }) => ({
      tenantId: claim.tenantId,
      targetId: claim.targetId,
    }));
    if (!early) return this.readTargets(wanted);
    const read = await early.answer;
    if (read instanceof TargetsUnavailable) return this.readTargets(wanted);
    const rest = wanted.filter((ref) => !early.asked.has(targetKey(ref)));
    if (rest.length === 0) return read;
    const later = await this.readTargets(rest);
    return later instanceof TargetsUnavailable ? later : read.with(later);
  }

  /** One read of the given targets; a failure is TargetsUnavailable (never rejects). */
  private readTargets(
    refs: ReadonlyArray<{ tenantId: string; targetId: string }>,
  ): Promise<DispatchTargets | TargetsUnavailable> {
    return this.targets
      .getForDispatch(refs)
      .catch((error: unknown) => new TargetsUnavailable(error));
  }

  private async traceParents(held: readonly HeldClaim[]): Promise<Map<string, string>> {
    const byTenant = new Map<string, string[]>();
    for (const { claim } of held) {
      const runIds = byTenant.get(claim.tenantId) ?? [];
      runIds.push(claim.runId);
      byTenant.set(claim.tenantId, runIds);
    }
    const found = await Promise.all(
      [...byTenant].map(([tenantId, runIds]) =>
        this.runs.traceParents(tenantId, runIds).catch(() => new Map<string, string>()),
      ),
    );
    return new Map(found.flatMap((traces) => [...traces]));
  }

  /** Resolves when every attempt in flight has ended (its run written under its fence). */
  async drain(): Promise<void> {
    while (this.attempts.size > 0) await Promise.all(this.attempts);
  }

  /** Closes idle connections to targets; call after drain(). */
  close(): void {
    this.connections.close();
  }

  private track(
    attempt: Promise<number | null>,
    onWake: (inMs: number) => void,
    lane: WorkerLane,
  ): void {
    const tracked: Promise<void> = attempt
      .then((wake) => {
        if (wake !== null) onWake(wake);
      })
      .catch((error: unknown) =>
        this.logger.error({ err: errorSummary(error) }, 'attempt failed unexpectedly'),
      )
      .finally(() => {
        this.attempts.delete(tracked);
        this.slots.release(lane, 1);
      });
    this.attempts.add(tracked);
  }

  /**
   * A run the batch's claim did not take, claimed alone: that says why it waits or ends (and
   * requeues it if it must wait). Null when it was not claimed.
   */
  private async claimAlone(run: RunJob, onWake: (inMs: number) => void): Promise<HeldClaim | null> {
    const claimSentAt = performance.now();
    const claimSentAtMs = Date.now();
    const result = await this.admission.claim(run.tenantId, run.runId, this.workerId, {
      requeue: true,
    });
    if (result.claimed) {
      return { claim: result.claim, claimSentAt, claimSentAtMs, claimedAtMs: Date.now() };
    }
    if (result.requeuedInMs !== null) onWake(result.requeuedInMs);
    return null;
  }

  /** One claimed run: the attempt under a kept lease, then the fenced completion. */
  private async run(
    { claim, claimSentAt, claimSentAtMs, claimedAtMs }: HeldClaim,
    targets: DispatchTargets | TargetsUnavailable,
    traceParent: string | undefined,
  ): Promise<number | null> {
    const { tenantId, runId } = claim;
    const runTrace = contextOf(traceParent);
    const spanIds = {
      'dueline.run_id': runId,
      'dueline.attempt': claim.attempt,
      'dueline.fencing_token': claim.fencingToken,
    };
    if (traceParent) {
      startSpan(
        'run.claim',
        { kind: SpanKind.CONSUMER, startTime: claimSentAtMs, attributes: spanIds },
        runTrace,
      ).end(claimedAtMs);
    }
    const ids = { tenantId, scheduleId: claim.scheduleId, runId, attempt: claim.attempt };
    const keeper = new LeaseKeeper({
      claimSentAt,
      heartbeat: () =>
        this.execution.heartbeat(tenantId, runId, claim.fencingToken, claim.scheduledAt),
      intervalMs: this.config.execution.heartbeatIntervalMs,
      leaseMs: this.config.execution.leaseMs,
      onError: (error) =>
        this.logger.warn({ ...ids, err: errorSummary(error) }, 'heartbeat failed'),
    });
    keeper.start();
    let report: AttemptReport;
    try {
      report =
        targets instanceof TargetsUnavailable
          ? {
              // Nothing was sent: safe to try again later.
              outcome: 'retryable',
              error: `the target could not be loaded: ${errorSummary(targets.cause).message}`,
              mayHaveActed: false,
            }
          : await this.attempt(claim, targets.of(tenantId, claim.targetId), keeper, runTrace);
    } finally {
      await keeper.stop();
    }
    if (keeper.lost) {
      // Another worker may hold the run now: whatever this one learnt, it writes nothing.
      this.logger.warn(ids, 'lease lost during the attempt; result discarded');
      return null;
    }
    const result = await inSpan(
      'run.complete',
      { kind: SpanKind.INTERNAL, attributes: { ...spanIds, 'dueline.outcome': report.outcome } },
      async (span) => {
        const done = await this.completeWithRetries(claim, report, ids);
        span.setAttribute('dueline.accepted', done?.accepted ?? false);
        if (done?.accepted) span.setAttribute('dueline.state', done.state);
        return done;
      },
      runTrace,
    );
    return result?.accepted ? result.retryInMs : null;
  }

  private async attempt(
    claim: Claim,
    target: DispatchTarget | null,
    keeper: LeaseKeeper,
    runTrace: ReturnType<typeof contextOf>,
  ): Promise<AttemptReport> {
    if (!target) {
      return {
        outcome: 'failed',
        failure: 'target_missing',
        error: `target ${claim.targetId} no longer exists`,
        mayHaveActed: false,
      };
    }
    const url = new URL(target.url);
    return inSpan(
      'target.call',
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'dueline.run_id': claim.runId,
          'dueline.attempt': claim.attempt,
          'http.request.method': target.method,
          'server.address': url.hostname,
          'url.path': url.pathname,
        },
      },
      async (span) => {
        const report = await this.call(claim, target, keeper, span);
        if (report.httpStatus) span.setAttribute('http.response.status_code', report.httpStatus);
        span.setAttribute('dueline.outcome', report.outcome);
        if (report.outcome !== 'succeeded') markError(span, report.outcome);
        return { ...report, traceId: traceIdOf(span) };
      },
      runTrace,
    );
  }

  /** The call itself, with its credentials and the span's traceparent. */
  private async call(
    claim: Claim,
    target: DispatchTarget,
    keeper: LeaseKeeper,
    span: Parameters<typeof propagationHeaders>[0],
  ): Promise<AttemptReport> {
    const scheduledAt = claim.scheduledAt.toISOString();
    const send = async (refresh: boolean) => {
      const credentials = await this.credentials.headersFor(target, claim, {
        refresh,
        signal: keeper.signal,
      });
      return invokeTarget(
        {
          url: target.url,
          method: target.method,
          headers: target.headers,
          timeoutMs: target.timeoutMs,
          body: {
            runId: claim.runId,
            scheduleId: claim.scheduleId,
            scheduledAt,
            attempt: claim.attempt,
            fencingToken: claim.fencingToken,
            payload: claim.payload,
          },
          signingSecrets: target.signingSecrets,
          idempotencyKey: claim.idempotencyKey,
          runId: claim.runId,
          attempt: claim.attempt,
          fencingToken: claim.fencingToken,
          scheduledAt,
          credentials,
          extraHeaders: propagationHeaders(span),
        },
        {
          allowed: this.config.targetAllowedHosts,
          signal: keeper.signal,
          now: () => this.clock.nowMs(),
          pools: target.deduplicates ? this.connections : undefined,
          keptResponseHeaders: this.config.attemptRecord.responseHeaders,
          maxBodySnippetBytes: this.config.attemptRecord.responseBodyBytes,
        },
      );
    };
    let response: Awaited<ReturnType<typeof send>>;
    try {
      response = await send(false);
      // A cached OAuth token the target refuses is fetched again, once: a 401 was not acted on.
      if (
        response.kind === 'response' &&
        response.status === 401 &&
        target.auth?.type === 'oauth2_client_credentials' &&
        !keeper.signal.aborted
      ) {
        response = await send(true);
      }
    } catch (error) {
      // No credential, so nothing was sent: safe to try again later.
      return {
        outcome: 'retryable',
        error: `request not sent: could not obtain credentials for the target: ${errorSummary(error).message}`,
        mayHaveActed: false,
      };
    }
    this.lifecycle.emit({
      kind: 'target.called',
      result: response.kind,
      seconds: response.durationMs / 1000,
    });
    if (keeper.cancelRequested && response.kind !== 'response') {
      return {
        outcome: 'cancelled',
        error: response.error,
        mayHaveActed: response.kind === 'maybe_sent',
        durationMs: response.durationMs,
      };
    }
    const classified = classifyOutcome(response, { deduplicates: target.deduplicates });
    return {
      outcome: classified.outcome,
      error: classified.outcome === 'succeeded' ? null : classified.reason,
      mayHaveActed: response.kind === 'maybe_sent',
      httpStatus: classified.httpStatus ?? null,
      durationMs: response.durationMs,
      retryAfterMs: classified.retryAfterMs ?? null,
      ...(classified.targetSignal === 'gone' ? { failure: 'target_gone' as const } : {}),
      targetBackoffMs:
        classified.targetSignal === 'back_off' ? (classified.retryAfterMs ?? null) : null,
      response:
        response.kind === 'response'
          ? { headers: response.headers, bodyExcerpt: response.bodySnippet }
          : null,
    };
  }

  /**
   * The database may be briefly unreachable just when the target answered: retry the fenced
   * completion a few times. If it never gets through, the lease expires and the sweeper decides
   * (retry for a deduplicating target, else UNKNOWN), so the run is never lost.
   */
  private async completeWithRetries(
    claim: Claim,
    report: AttemptReport,
    ids: Record<string, unknown>,
  ): Promise<CompletionResult | null> {
    for (let round = 0; ; round++) {
      try {
        const result = await this.completions.submit({
          tenantId: claim.tenantId,
          runId: claim.runId,
          fencingToken: claim.fencingToken,
          scheduledAt: claim.scheduledAt,
          report,
        });
        if (!result.accepted) this.logger.warn(ids, 'completion rejected: the lease had moved on');
        return result;
      } catch (error) {
        if (round >= this.config.worker.completionRetries) {
          this.logger.error(
            { ...ids, err: errorSummary(error) },
            'completion failed; the lease sweeper will settle the run',
          );
          return null;
        }
        this.logger.warn({ ...ids, err: errorSummary(error) }, 'completion failed; retrying');
        await new Promise((done) =>
          setTimeout(done, this.config.worker.completionRetryBaseMs * 2 ** round),
        );
      }
    }
  }
}

/** The targets of a batch could not be read: its runs end their attempt as retryable. */
class TargetsUnavailable {
  constructor(readonly cause: unknown) {}
}

/** A read of the targets a batch's jobs name, started beside its claims. */
interface EarlyTargetsRead {
  /** The tenant/target pairs it asked for (targetKey): a target it did not find is gone. */
  asked: ReadonlySet<string>;
  answer: Promise<DispatchTargets | TargetsUnavailable>;
}

function targetKey(ref: { tenantId: string; targetId: string }): string {
  return `${ref.tenantId}/${ref.targetId}`;
}
