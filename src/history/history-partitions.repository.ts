import { Injectable } from '@nestjs/common';
import { SqlRunner, type Tx } from '../database';
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

/** Bounded waits for the parents' lock per maintenance step (see lockParents). */
const LOCK_TRIES = 8;
/** The mean pause between two of them. */
const LOCK_RETRY_PAUSE_MS = 150;
/** Postgres's lock_not_available: a lock_timeout ran out. */
const LOCK_NOT_AVAILABLE = '55P03';

const isLockNotAvailable = (error: unknown): boolean =>
  (error as { code?: unknown } | null)?.code === LOCK_NOT_AVAILABLE ||
  (error as { driverError?: { code?: unknown } } | null)?.driverError?.code === LOCK_NOT_AVAILABLE;

const pause = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** A range partition of the runs (its attempts' partition has the same range). */
export interface HistoryPartition extends PartitionRange {
  name: string;
}

/** The partitions of the run history: listed from the catalog, created, dropped. */
@Injectable()
export class HistoryPartitionsRepository {
  constructor(private readonly sql: SqlRunner) {}

  /** A maintenance transaction: under the maintenance lock, with bounded lock waits. */
  maintenance<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.sql.transaction(async (tx) => {
      await this.sql.rows(BOUNDED_LOCK_WAIT, [], tx);
      await this.sql.rows(MAINTENANCE_LOCK, [], tx);
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
  async create(tx: Tx, range: PartitionRange): Promise<boolean> {
    const from = boundLiteral(range.from);
    const to = boundLiteral(range.to);
    await this.lockParents(tx);
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
   * LOCK_HISTORY_PARENTS, held to the end of `tx`: up to LOCK_TRIES bounded waits (see
   * LOCK_TRY_SAVEPOINT), a short random pause between them so a try does not land on the next
   * batch's wait again. Throws the last refusal when none is granted.
   */
  async lockParents(tx: Tx): Promise<void> {
    for (let tryNumber = 1; ; tryNumber++) {
      await this.sql.rows(LOCK_TRY_SAVEPOINT, [], tx);
      try {
        await this.sql.rows(LOCK_HISTORY_PARENTS, [], tx);
        await this.sql.rows(LOCK_TRY_RELEASE, [], tx);
        return;
      } catch (error) {
        await this.sql.rows(LOCK_TRY_ROLLBACK, [], tx);
        if (!isLockNotAvailable(error) || tryNumber >= LOCK_TRIES) throw error;
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
