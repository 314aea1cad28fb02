import { Injectable } from '@nestjs/common';
import type { Tx } from '../database';
import { RunJobsRepository } from '../queue';
import { handsOverWhenEnded, type ActiveRuns, type OverlapPolicy } from './overlap-policy';
import { OverlapRepository } from './overlap.repository';

/** The overlap policy's state in the database: active runs, and the hand-over to a waiting one. */
@Injectable()
export class OverlapService {
  constructor(
    private readonly overlap: OverlapRepository,
    private readonly jobs: RunJobsRepository,
  ) {}

  /** Active and waiting runs per schedule, for the poller's plan (inside its transaction). */
  activeRuns(tx: Tx, scheduleIds: readonly string[]): Promise<Map<string, ActiveRuns>> {
    return this.overlap.activeRuns(tx, scheduleIds);
  }

  /**
   * A run of the schedule ended in `tx`: if the policy hands over, the oldest waiting run gets
   * its job in the same transaction, so it can never be forgotten. `endedRunId` is never handed
   * its own turn.
   */
  async runEnded(
    tx: Tx,
    run: { scheduleId: string; overlapPolicy: OverlapPolicy; endedWhileWaiting: boolean },
    endedRunId?: string,
  ): Promise<void> {
    if (!handsOverWhenEnded(run.overlapPolicy, run.endedWhileWaiting)) return;
    const waiting = await this.overlap.nextWaitingRun(tx, run.scheduleId);
    if (waiting && waiting.runId !== endedRunId) await this.jobs.publish(tx, [waiting]);
  }
}
