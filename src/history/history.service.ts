import { Inject, Injectable, Logger } from '@nestjs/common';
import { errorSummary } from '../common';
import { APP_CONFIG, type AppConfig } from '../config';
import type { Tx } from '../database';
import { Lifecycle } from '../observability';
import {
  HistoryPartitionsRepository,
  type HistoryPartition,
} from './history-partitions.repository';
import { HISTORY_SUMMARISER, type HistorySummariser } from './history-summariser';
import { expiredPartitions, planPartitions, type PartitionRange } from './partition-plan';

/** Where a partition's drop got to, for the warning when it does not finish. */
interface DropProgress {
  step: 'vacuum' | 'summary' | 'parents' | 'drop';
}

/** A run became live in a partition being dropped: the round gives up on it until the next. */
class PartitionChangedError extends Error {
  constructor(partition: string) {
    super(`history partition ${partition} gained a live run while it was being dropped`);
  }
}

/** A tenant's historyRetentionDays when none is set (the quota's default). */
export const DEFAULT_HISTORY_RETENTION_DAYS = 7;
/** At most this many expired partitions are dropped in one round (each in its own transaction). */
const DROPS_PER_ROUND = 100;

export interface MaintenanceResult {
  created: PartitionRange[];
  /** Of the created ranges, those whose runs were moved out of the DEFAULT partition. */
  moved: PartitionRange[];
  dropped: PartitionRange[];
  /** Expired partitions kept because a run in them is still QUEUED, RUNNING or RETRY_WAIT. */
  waiting: PartitionRange[];
}

/**
 * The run history's partitions over time: creates them ahead of the clock and drops those whose
 * whole range is older than the longest retention any tenant keeps (never below the floor), but
 * never one holding a live run. Every step runs under the maintenance advisory lock, so any
 * replica may call it at any time.
 */
@Injectable()
export class HistoryService {
  private readonly logger = new Logger(HistoryService.name);

  constructor(
    private readonly partitions: HistoryPartitionsRepository,
    @Inject(HISTORY_SUMMARISER) private readonly summariser: HistorySummariser,
    private readonly lifecycle: Lifecycle,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async maintain(): Promise<MaintenanceResult> {
    const { created, moved } = await this.createAhead();
    const { dropped, waiting } = await this.dropExpired();
    this.lifecycle.emit({
      kind: 'history.maintained',
      created: created.length,
      dropped: dropped.length,
      waiting: waiting.length,
    });
    return { created, moved, dropped, waiting };
  }

  /** Creates the partitions the plan asks for, in one transaction. */
  async createAhead(): Promise<{ created: PartitionRange[]; moved: PartitionRange[] }> {
    const { partitionMinutes, partitionsAhead } = this.config.history;
    return this.partitions.maintenance(async (tx) => {
      const existing = await this.partitions.list(tx);
      const input = {
        existing,
        now: await this.partitions.databaseNow(tx),
        widthMinutes: partitionMinutes,
        ahead: partitionsAhead,
        oldestDefaultBelow: null,
      };
      const ahead = planPartitions(input);
      const lowest = existing[0]?.from ?? ahead[0]?.from;
      const oldestDefaultBelow = lowest
        ? await this.partitions.oldestDefaultRunBefore(tx, lowest)
        : null;
      const plan = oldestDefaultBelow ? planPartitions({ ...input, oldestDefaultBelow }) : ahead;
      const moved: PartitionRange[] = [];
      for (const range of plan) {
        if (await this.partitions.create(tx, range)) moved.push(range);
      }
      return { created: plan, moved };
    });
  }

  /** Drops expired partitions without live runs, each in its own transaction (bounded). */
  async dropExpired(): Promise<{ dropped: PartitionRange[]; waiting: PartitionRange[] }> {
    const { expired, retentionMinutes } = await this.partitions.maintenance(async (tx) => {
      const minutes = await this.retentionMinutes(tx);
      const now = await this.partitions.databaseNow(tx);
      return {
        expired: expiredPartitions(await this.partitions.list(tx), now, minutes),
        retentionMinutes: minutes,
      };
    });
    const dropped: PartitionRange[] = [];
    const waiting: PartitionRange[] = [];
    for (const partition of expired.slice(0, DROPS_PER_ROUND)) {
      let live: number;
      const progress: DropProgress = { step: 'vacuum' };
      try {
        live = await this.dropIfSettled(partition, progress);
      } catch (error) {
        // A lock not granted within its bound, or a run that became live: the next round.
        this.logger.warn(
          { partition: partition.name, step: progress.step, err: errorSummary(error) },
          'expired history partition not dropped this round',
        );
        break;
      }
      if (live === 0) {
        dropped.push(partition);
      } else {
        waiting.push(partition);
        this.logger.warn(
          { partition: partition.name, liveRuns: live, retentionMinutes },
          'expired history partition kept: it still holds live runs',
        );
      }
    }
    return { dropped, waiting };
  }

  /**
   * 0 when dropped; else the live runs that keep it. Vacuum is kept off the partition first
   * (see holdOffVacuum: the drop must not wait for it under the parents' lock). The summary is
   * written before the parents are locked (it reads the whole range, and no writer should wait
   * for that), the live runs are checked again under the lock, and the drop commits with the
   * summary.
   */
  private dropIfSettled(partition: HistoryPartition, progress: DropProgress): Promise<number> {
    return this.partitions.maintenance(async (tx) => {
      await this.partitions.holdOffVacuum(tx, partition);
      progress.step = 'summary';
      const live = await this.partitions.countLive(tx, partition);
      if (live > 0) return live;
      await this.summariser.summariseRange(tx, partition.from, partition.to);
      progress.step = 'parents';
      return this.partitions.underParentsLock(tx, async () => {
        const liveNow = await this.partitions.countLive(tx, partition);
        // A run written into the range meanwhile: the summary rolls back with the drop.
        if (liveNow > 0) throw new PartitionChangedError(partition.name);
        progress.step = 'drop';
        await this.partitions.drop(tx, partition);
        return 0;
      });
    });
  }

  /**
   * The history kept: HISTORY_RETENTION_OVERRIDE_MINUTES when set (benchmarks, tests), else the
   * longest historyRetentionDays of any tenant, never below HISTORY_RETENTION_FLOOR_DAYS.
   */
  private async retentionMinutes(tx: Tx): Promise<number> {
    const { retentionOverrideMinutes, retentionFloorDays } = this.config.history;
    if (retentionOverrideMinutes !== null) return retentionOverrideMinutes;
    const longest =
      (await this.partitions.longestTenantRetentionDays(tx)) ?? DEFAULT_HISTORY_RETENTION_DAYS;
    return Math.max(longest, retentionFloorDays) * 1440;
  }
}
