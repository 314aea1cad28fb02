import { Injectable } from '@nestjs/common';
import { failedWith, SQL_STATE, SqlRunner, type Tx } from '../database';
import {
  addRangeCheck,
  attachPartition,
  BOUNDED_LOCK_WAIT,
  copyDefaultRange,
  createStandalone,
  DATABASE_NOW,
  DEFAULT_HOLDS_RANGE,
  deleteDefaultRange,
  detachPartition,
  dropRangeCheck,
  dropTable,
  holdOffVacuum,
  LIST_RANGE_PARTITIONS,
  liveRunsIn,
  LOCK_DEFAULT_PARTITIONS,
  LOCK_HISTORY_PARENTS,
  LOCK_TRY_RELEASE,
  LOCK_TRY_ROLLBACK,
  LOCK_TRY_SAVEPOINT,
  LONGEST_TENANT_RETENTION_DAYS,
  MAINTENANCE_LOCK,
  OLDEST_DEFAULT_RUN_BEFORE,
  VACUUM_LOCK_WAIT,
} from './history-partitions.sql';
import { boundLiteral, defaultPartitionOf, HISTORY_TABLES, partitionName } from './partition-names';
import type { PartitionRange } from './partition-plan';

/** Bounded tries per maintenance step under the parents' lock (see underParentsLock). */
const LOCK_TRIES = 8;
/** The mean pause between two of them. */
const LOCK_RETRY_PAUSE_MS = 150;
const pause = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** A range partition of the runs (its attempts' partition has the same range). */
export interface HistoryPartition extends PartitionRange {
  name: string;
}

/** The partitions of the run history: listed from the catalog, created, dropped. */
@Injectable()
export class HistoryPartitionsRepository {
  constructor(private readonly sql: SqlRunner) {}

  /**
   * A maintenance transaction: under the maintenance lock, with bounded lock waits. The
   * maintenance lock is taken before the bound is set: a second maintainer waits for the first
   * however long its bounded steps take (no hot-path statement ever waits for that lock), rather
   * than failing its round after 200 ms.
   */
  maintenance<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.sql.transaction(async (tx) => {
      await this.sql.rows(MAINTENANCE_LOCK, [], tx);
      await this.sql.rows(BOUNDED_LOCK_WAIT, [], tx);
      return work(tx);
    });
  }

  async databaseNow(tx: Tx): Promise<Date> {
    const [row] = await this.sql.rows<{ now: Date }>(DATABASE_NOW, [], tx);
    return row.now;
  }

  /** The runs' range partitions, oldest first. */
  async list(tx?: Tx): Promise<HistoryPartition[]> {
    const rows = await this.sql.rows<{ name: string; from_at: Date; to_at: Date }>(
      LIST_RANGE_PARTITIONS,
      ['occurrences'],
      tx,
    );
    return rows.map((r) => ({ name: r.name, from: r.from_at, to: r.to_at }));
  }

  async oldestDefaultRunBefore(tx: Tx, before: Date): Promise<Date | null> {
    const [row] = await this.sql.rows<{ oldest: Date | null }>(
      OLDEST_DEFAULT_RUN_BEFORE,
      [before],
      tx,
    );
    return row?.oldest ?? null;
  }

  /**
   * Creates the runs' and the attempts' partition of one range, moving into them whatever the
   * DEFAULT partitions hold of it. Returns whether any run moved.
   */
  create(tx: Tx, range: PartitionRange): Promise<boolean> {
    return this.underParentsLock(tx, () => this.createLocked(tx, range));
  }

  private async createLocked(tx: Tx, range: PartitionRange): Promise<boolean> {
    const from = boundLiteral(range.from);
    const to = boundLiteral(range.to);
    await this.sql.rows(LOCK_DEFAULT_PARTITIONS, [], tx);
    const [{ holds }] = await this.sql.rows<{ holds: boolean }>(
      DEFAULT_HOLDS_RANGE,
      [range.from, range.to],
      tx,
    );
    for (const table of HISTORY_TABLES) {
      const name = partitionName(table, range.from);
      await this.sql.rows(createStandalone(name, table), [], tx);
      if (holds) {
        await this.sql.rows(
          copyDefaultRange(name, defaultPartitionOf(table)),
          [range.from, range.to],
          tx,
        );
      }
    }
    if (holds) {
      // Attempts first: nothing references them, and the runs' delete then cascades to none.
      for (const table of [...HISTORY_TABLES].reverse()) {
        await this.sql.rows(
          deleteDefaultRange(defaultPartitionOf(table)),
          [range.from, range.to],
          tx,
        );
      }
    }
    // Runs before attempts: the attempts' foreign key validates against the attached runs.
    for (const table of HISTORY_TABLES) {
      const name = partitionName(table, range.from);
      await this.sql.rows(addRangeCheck(name, from, to), [], tx);
      await this.sql.rows(attachPartition(table, name, from, to), [], tx);
      await this.sql.rows(dropRangeCheck(name), [], tx);
    }
    return holds;
  }

  /** The live runs (QUEUED, RUNNING, RETRY_WAIT) of a partition. */
  async countLive(tx: Tx, partition: HistoryPartition): Promise<number> {
    const [{ live }] = await this.sql.rows<{ live: number }>(liveRunsIn(partition.name), [], tx);
    return live;
  }

  /** holdOffVacuum on a partition's runs and attempts, held to the end of `tx`. */
  async holdOffVacuum(tx: Tx, partition: HistoryPartition): Promise<void> {
    await this.sql.rows(VACUUM_LOCK_WAIT, [], tx);
    await this.sql.rows(
      holdOffVacuum(HISTORY_TABLES.map((table) => partitionName(table, partition.from))),
      [],
      tx,
    );
    await this.sql.rows(BOUNDED_LOCK_WAIT, [], tx);
  }

  /**
   * `work` under LOCK_HISTORY_PARENTS (held to the end of `tx` once it succeeds): up to
   * LOCK_TRIES tries, each from a savepoint, a short random pause between them. A try gives up
   * when a lock is not granted within BOUNDED_LOCK_WAIT: the parents' (a poller batch holds
   * `occurrences` while it waits for its instant, back to back under a steady load, so one try
   * often meets one), or one that `work`'s DDL needs while holding them (a DEFAULT partition,
   * an expired partition someone reads by name).
   * Rolling back to the savepoint releases what the try took, keeping what came before (a
   * summary). Any other error, or the last refusal, is thrown.
   */
  async underParentsLock<T>(tx: Tx, work: () => Promise<T>): Promise<T> {
    for (let tryNumber = 1; ; tryNumber++) {
      await this.sql.rows(LOCK_TRY_SAVEPOINT, [], tx);
      try {
        await this.sql.rows(LOCK_HISTORY_PARENTS, [], tx);
        const result = await work();
        await this.sql.rows(LOCK_TRY_RELEASE, [], tx);
        return result;
      } catch (error) {
        await this.sql.rows(LOCK_TRY_ROLLBACK, [], tx);
        if (!failedWith(error, SQL_STATE.lockNotAvailable) || tryNumber >= LOCK_TRIES) throw error;
      }
      await pause(LOCK_RETRY_PAUSE_MS * (0.5 + Math.random()));
    }
  }

  /** Detaches and drops a partition's attempts, then its runs (whole tables, no row deletes). */
  async drop(tx: Tx, partition: HistoryPartition): Promise<void> {
    for (const table of [...HISTORY_TABLES].reverse()) {
      const name = partitionName(table, partition.from);
      await this.sql.rows(detachPartition(table, name), [], tx);
      await this.sql.rows(dropTable(name), [], tx);
    }
  }

  async longestTenantRetentionDays(tx: Tx): Promise<number | null> {
    const [row] = await this.sql.rows<{ days: number | null }>(
      LONGEST_TENANT_RETENTION_DAYS,
      [],
      tx,
    );
    return row?.days ?? null;
  }
}
