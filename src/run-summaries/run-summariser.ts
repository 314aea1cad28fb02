import { Injectable, Logger } from '@nestjs/common';
import type { Tx } from '../database';
import { RunSummariesRepository } from './run-summaries.repository';

/**
 * The history's summariser (see history/history-summariser.ts), the hook the partition
 * maintenance calls, in the transaction that drops the partition of
 * scheduled_at range [from, to), before the drop: the final runs of the range (with their first
 * attempts) become run summaries, and the range goes on the ledger. Summary and drop commit
 * together, so a range is summarised exactly once; a repeat of the same range writes nothing,
 * and a range overlapping one already summarised throws (the drop then rolls back with it).
 * Runs still active in the range are not summarised: they stay rows and count from there.
 */
@Injectable()
export class RunSummariser {
  private readonly logger = new Logger(RunSummariser.name);

  constructor(private readonly summaries: RunSummariesRepository) {}

  async summariseRange(tx: Tx, from: Date, to: Date): Promise<void> {
    if (!(from.getTime() < to.getTime())) {
      throw new RangeError(
        `summary range must be non-empty: ${from.toISOString()}..${to.toISOString()}`,
      );
    }
    if (!(await this.summaries.claimRange(tx, from, to))) {
      this.logger.log({ from, to }, 'history range already summarised');
      return;
    }
    const runs = await this.summaries.summarise(tx, from, to);
    this.logger.log({ from, to, runs }, 'history range summarised');
  }
}
