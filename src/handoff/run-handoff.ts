import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config';
import { Lifecycle } from '../observability';
import type { Tx } from '../database';
import { RunJobsRepository, type HandedOffJob, type RunToPublish } from '../queue';
import type { HandoffReceiver, HandoffRoom } from './handoff-receiver';

/**
 * The handoff of dispatched runs to a worker beside the poller. A run due now normally reaches a
 * worker through the queue: its job's insert notifies the workers' listeners, one of them fetches
 * the job, claims the run, deletes the job and has pg-boss complete it. When a worker of this
 * same service has room, the poller instead writes the jobs held back from fetches for a grace
 * period (WORKER_HANDOFF_GRACE_MS) and, once its transaction has committed, gives them to that
 * worker, which claims the runs at once and deletes the jobs: a wake-up and two statements fewer
 * a batch, and no wait for a fetch. The job stays the run's durable way to a worker: if the one
 * it was handed to never claims it, any worker fetches it when the grace ends. A run is claimed
 * under its fence either way, so a job both handed off and fetched is still one run.
 *
 * Only batches a worker's fetch would take whole (WORKER_BATCH_SIZE runs at most) are handed
 * off, and only to a receiver whose known room fits them: a crowded instant, or a fleet that is
 * full, goes through the queue, where every worker of every replica shares it.
 */
@Injectable()
export class RunHandoff {
  private readonly receivers: HandoffReceiver[] = [];
  private turn = 0;
  readonly graceMs: number;
  private readonly maxRuns: number;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly lifecycle: Lifecycle,
    private readonly jobs: RunJobsRepository,
  ) {
    this.graceMs = config.worker.handoffGraceMs;
    this.maxRuns = config.worker.batchSize;
  }

  /** Adds a worker that takes handoffs; returns its removal. */
  register(receiver: HandoffReceiver): () => void {
    this.receivers.push(receiver);
    return () => {
      const at = this.receivers.indexOf(receiver);
      if (at >= 0) this.receivers.splice(at, 1);
    };
  }

  /**
   * A worker with room for all of `runs` now, taking turns among those that have it; null when
   * handoff is off, there is none, or the batch is larger than a worker's fetch would take (then
   * the runs are published to the queue as usual).
   */
  receiverFor(runs: readonly RunToPublish[]): HandoffReceiver | null {
    if (this.graceMs === 0 || runs.length === 0 || runs.length > this.maxRuns) return null;
    const count = this.receivers.length;
    if (count === 0) return null;
    const high = runs.filter((run) => run.priority === 'high').length;
    const need: HandoffRoom = { high, other: runs.length - high };
    for (let i = 0; i < count; i++) {
      const receiver = this.receivers[(this.turn + i) % count];
      if (fits(need, receiver.room())) {
        this.turn = (this.turn + i + 1) % count;
        return receiver;
      }
    }
    return null;
  }

  /**
   * Writes the jobs of runs admitted in `tx`: for a worker beside this process when one has room
   * for them (held back from fetches for the grace), else to the queue as always. What it
   * returns goes to that worker through deliver() once `tx` has committed (null: the queue has
   * them).
   */
  async publish(tx: Tx, runs: readonly RunToPublish[]): Promise<PendingHandoff | null> {
    const receiver = this.receiverFor(runs);
    if (!receiver) {
      await this.jobs.publish(tx, runs);
      return null;
    }
    return { receiver, jobs: await this.jobs.publishHandedOff(tx, runs, this.graceMs) };
  }

  /** Gives committed jobs to the worker publish() chose for them. */
  deliver(pending: PendingHandoff | null): void {
    if (!pending || pending.jobs.length === 0) return;
    pending.receiver.take(pending.jobs);
    const runs = pending.jobs.reduce((sum, job) => sum + job.runs.length, 0);
    this.lifecycle.emit({ kind: 'runs.handed_off', count: runs });
  }
}

/** Jobs written for a worker, to give it once their transaction has committed. */
export interface PendingHandoff {
  receiver: HandoffReceiver;
  jobs: HandedOffJob[];
}

function fits(need: HandoffRoom, room: HandoffRoom): boolean {
  return need.other <= room.other && need.high + need.other <= room.high;
}
