import { Injectable, Logger } from '@nestjs/common';
import { DuelineMetrics } from './dueline-metrics';
import { ADMISSION_WAITS } from '../run-vocabulary';
import type { LifecycleEvent } from './lifecycle-event';
import { MetricsService } from './metrics.service';

/**
 * Where the engine reports what happened (see LifecycleEvent). Synchronous and cheap: it updates
 * counters and writes the event's log line, if it has one, with the run's ids.
 */
@Injectable()
export class Lifecycle {
  private readonly logger = new Logger('Lifecycle');

  constructor(
    private readonly metrics: DuelineMetrics,
    private readonly app: MetricsService,
  ) {}

  emit(event: LifecycleEvent): void {
    const m = this.metrics;
    switch (event.kind) {
      case 'role.started':
      case 'role.stopped':
        this.app.roleActive.set({ role: event.role }, event.kind === 'role.started' ? 1 : 0);
        return;
      case 'run.claimed':
        m.runStarts.inc({ priority: event.priority });
        // Debug: at full speed this is a line per run, and "attempt ended" already names each.
        this.logger.debug(event.run, 'run claimed');
        return;
      case 'claim.refused':
        m.claimsRefused.inc({ reason: event.reason });
        if (event.job) m.unclaimableJobs.inc({ reason: event.reason });
        this.logger.debug(
          { tenantId: event.tenantId, runId: event.runId, reason: event.reason },
          'claim refused',
        );
        return;
      case 'target.called':
        m.targetLatency.observe({ result: event.result }, event.seconds);
        return;
      case 'attempt.ended': {
        m.attempts.inc({ outcome: event.outcome });
        if (event.state === 'UNKNOWN') m.unknownOutcomes.inc();
        const context = { ...event.run, outcome: event.outcome, state: event.state };
        if (event.outcome === 'lease_lost') {
          m.leaseExpiries.inc();
          this.logger.warn(context, 'lease expired');
        } else {
          this.logger.log(context, 'attempt ended');
        }
        return;
      }
      case 'completion.stale':
        m.staleCompletions.inc();
        this.logger.warn(
          { ...event.run, current: event.currentFencingToken },
          'stale completion rejected',
        );
        return;
      case 'dispatch.committed':
        if (event.dropped) m.dropped.inc(event.dropped);
        for (const run of event.created) {
          m.created.inc({ state: run.state });
          if (run.state === 'SKIPPED') m.skipped.inc({ reason: run.reason ?? 'unknown' });
          else if (run.reason === null) {
            m.dispatchLag.observe((event.at.getTime() - run.scheduledAt.getTime()) / 1000);
          }
        }
        return;
      case 'shards.held':
        m.shardsOwned.set(event.owned);
        if (event.lost.length > 0) {
          m.leaseLosses.inc(event.lost.length);
          this.logger.warn({ pollerId: event.pollerId, lost: event.lost }, 'shard leases lost');
        }
        return;
      case 'clock.skew':
        m.clockSkew.set(event.seconds);
        return;
      case 'due.oldest_age':
        m.oldestDueAge.set(event.seconds);
        return;
      case 'outbox.repaired':
        m.republished.inc(event.republished);
        this.logger.warn(
          { repaired: event.republished },
          'republished QUEUED runs that had no queue job',
        );
        return;
      case 'outbox.age':
        m.outboxAge.set(event.seconds);
        return;
      case 'history.maintained':
        m.historyPartitionsCreated.inc(event.created);
        m.historyPartitionsDropped.inc(event.dropped);
        m.historyPartitionsWaiting.set(event.waiting);
        if (event.created || event.dropped) {
          this.logger.log(
            { created: event.created, dropped: event.dropped, waiting: event.waiting },
            'history partitions maintained',
          );
        }
        return;
      case 'runs.admitted':
        m.admittedFromWaiting.inc(event.count);
        return;
      case 'runs.handed_off':
        m.handedOffRuns.inc(event.count);
        return;
      case 'handoff.released':
        m.handoffReleasedRuns.inc(event.runs);
        return;
      case 'admission.waiting':
        for (const reason of ADMISSION_WAITS) {
          m.waitingRuns.set({ reason }, event.runs[reason] ?? 0);
        }
        m.oldestWaiting.set(event.oldestSeconds);
        return;
      case 'runs.deadline_skipped':
        m.deadlineSkips.inc(event.count);
        return;
      case 'runs.target_gone':
        m.targetGoneRuns.inc(event.count);
        return;
      case 'target.backoff':
        m.targetBackoffs.inc();
        this.logger.log(
          { tenantId: event.tenantId, targetId: event.targetId, seconds: event.seconds },
          'target backing off (Retry-After)',
        );
        return;
      case 'target.disabled':
        m.targetsDisabled.inc();
        this.logger.warn(
          { tenantId: event.tenantId, targetId: event.targetId },
          'target disabled (410 Gone)',
        );
        return;
      case 'worker_process.ready':
        m.workerProcesses.set(event.live);
        this.logger.log({ workerPid: event.pid, workerId: event.workerId }, 'worker process ready');
        return;
      case 'worker_process.exited': {
        m.workerProcesses.set(event.live);
        const exit = { workerPid: event.pid, code: event.code, signal: event.signal };
        if (event.restartInMs === null) {
          this.logger.log(exit, 'worker process stopped');
          return;
        }
        m.workerProcessRestarts.inc();
        this.logger.error(
          { ...exit, restartInMs: event.restartInMs },
          'worker process exited unexpectedly; restarting it',
        );
        return;
      }
    }
  }
}
