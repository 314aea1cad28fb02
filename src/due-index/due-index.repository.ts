import { Injectable } from '@nestjs/common';
import { SqlRunner, type Tx } from '../database';
import {
  CLAIM_DUE_ENTRIES,
  CLAIM_FRESHEST_DUE,
  CLAIM_INSTANT_ENTRIES,
  DELETE_DUE_ENTRIES,
  INSERT_DUE_ENTRIES,
  NEXT_CROWDED_INSTANT,
  NEXT_DUE_IN_SHARDS,
  REMOVE_DUE_ENTRIES,
  REMOVE_DUE_ENTRIES_OF,
  WAIT_UNTIL,
} from './due-index.sql';
import { shardOf } from './shard';
import { WAKE_HORIZON_MS } from './wake-up';

export interface ClaimedDueEntry {
  shard: number;
  dueAt: Date;
  /** The stored due_at to the microsecond, to address this exact row again. */
  dueAtExact: string;
  scheduleId: string;
  revision: number;
}

export interface ClaimedDueBatch {
  entries: ClaimedDueEntry[];
  /**
   * The latest instant the batch may hold: the database's now() when it holds entries already
   * due, else the one instant it was prepared ahead for. Null when the batch is empty.
   */
  horizon: { at: Date; exact: string } | null;
  /** The transaction's now(), read with the claim. Null when the batch is empty. */
  transactionNow: Date | null;
}

type ClaimedRow = DueEntryRow & { horizon: Date; horizon_exact: string; transaction_now: Date };

/** An instant not yet due and how many entries share it (see NEXT_CROWDED_INSTANT). */
export interface CrowdedInstant {
  /** The instant to the microsecond, as stored. */
  exact: string;
  /** The same instant to the millisecond. */
  at: Date;
  /** Entries due at it (of the entries the look read). */
  entries: number;
  /** Milliseconds until it by the database clock. */
  inMs: number;
}

/** Bounds of the crowded-instant look (see NEXT_CROWDED_INSTANT). */
export interface CrowdedInstantLook {
  /** How far ahead to look, ms. */
  withinMs: number;
  /** Entries an instant needs to count as crowded. */
  minEntries: number;
  /** The most entries the look reads. */
  readLimit: number;
  /** Instants already being prepared (exact text), left out. */
  excluding: readonly string[];
}

export interface DueEntry {
  scheduleId: string;
  tenantId: string;
  revision: number;
  dueAt: Date;
}

/**
 * Writes to the due-time index always happen inside the transaction that changes the schedule
 * (the caller's), so a committed schedule always has its matching entry.
 */

interface DueEntryRow {
  shard: number;
  due_at: Date;
  due_at_exact: string;
  schedule_id: string;
  revision: number;
}

function claimedBatch(rows: readonly ClaimedRow[]): ClaimedDueBatch {
  const [first] = rows;
  return {
    entries: rows.map(claimedEntry),
    horizon: first ? { at: first.horizon, exact: first.horizon_exact } : null,
    transactionNow: first?.transaction_now ?? null,
  };
}

function claimedEntry(row: DueEntryRow): ClaimedDueEntry {
  return {
    shard: row.shard,
    dueAt: row.due_at,
    dueAtExact: row.due_at_exact,
    scheduleId: row.schedule_id,
    revision: row.revision,
  };
}

@Injectable()
export class DueIndexRepository {
  constructor(private readonly sql: SqlRunner) {}

  async replace(tx: Tx, entry: DueEntry): Promise<void> {
    await this.sql.rows(REMOVE_DUE_ENTRIES, [entry.scheduleId], tx);
    await this.add(tx, [entry]);
  }

  /**
   * Locks up to `limit` entries of the given shards for this transaction: those due by the
   * database clock or, with none, those of the next instant if it is within `lookaheadMs`, and
   * past `after`, an instant another transaction is preparing, none of `crowded` (the instant
   * the crowded-instant lane is preparing; see CLAIM_DUE_ENTRIES). `horizon` is the latest
   * instant the batch may hold.
   */
  async claimDue(
    tx: Tx,
    shards: readonly number[],
    limit: number,
    lookaheadMs: number,
    after: string | null = null,
    crowded: string | null = null,
  ): Promise<ClaimedDueBatch> {
    return claimedBatch(
      await this.sql.rows<ClaimedRow>(
        CLAIM_DUE_ENTRIES,
        [shards, limit, lookaheadMs, after, crowded],
        tx,
      ),
    );
  }

  /**
   * Locks up to `limit` entries later than `after` (the last instant a backlog's batch took),
   * newest first: those due by the database clock or, when none is, those of the next instant
   * within `lookaheadMs` (the horizon to commit at), future ones up to `prepared` (an instant a
   * batch of the lane waits for) left out. The poller's fresh lane (see CLAIM_FRESHEST_DUE).
   */
  async claimFresh(
    tx: Tx,
    shards: readonly number[],
    after: string,
    limit: number,
    lookaheadMs: number,
    prepared: string | null = null,
  ): Promise<ClaimedDueBatch> {
    return claimedBatch(
      await this.sql.rows<ClaimedRow>(
        CLAIM_FRESHEST_DUE,
        [shards, after, limit, lookaheadMs, prepared],
        tx,
      ),
    );
  }

  /**
   * Locks up to `limit` entries due at exactly `instant` (text to the microsecond), the horizon
   * the batch commits at: the crowded-instant lane's batch (see CLAIM_INSTANT_ENTRIES).
   */
  async claimInstant(
    tx: Tx,
    shards: readonly number[],
    instant: string,
    limit: number,
  ): Promise<ClaimedDueBatch> {
    return claimedBatch(
      await this.sql.rows<ClaimedRow>(CLAIM_INSTANT_ENTRIES, [shards, instant, limit], tx),
    );
  }

  /**
   * The earliest crowded instant ahead in the given shards, else the earliest instant ahead at
   * all, or null when none is within reach (see NEXT_CROWDED_INSTANT).
   */
  async nextCrowdedInstant(
    shards: readonly number[],
    look: CrowdedInstantLook,
  ): Promise<CrowdedInstant | null> {
    if (shards.length === 0) return null;
    const [row] = await this.sql.rows<{
      due_at: Date;
      due_at_exact: string;
      entries: number;
      wait_ms: number;
    }>(NEXT_CROWDED_INSTANT, [
      shards,
      look.withinMs,
      look.minEntries,
      look.readLimit,
      look.excluding,
    ]);
    if (!row) return null;
    return { exact: row.due_at_exact, at: row.due_at, entries: row.entries, inMs: row.wait_ms };
  }

  /**
   * Milliseconds until the earliest entry later than `after` is due by the database clock (0:
   * due now), or null when there is none, future entries up to `prepared` (an instant a batch of
   * the lane waits for) left out: the fresh lane's look (see NEXT_DUE_IN_SHARDS).
   */
  async nextFreshDueInMs(
    shards: readonly number[],
    after: string,
    prepared: string | null = null,
  ): Promise<number | null> {
    return (await this.earliest(shards, after, prepared))?.waitMs ?? null;
  }

  /** Returns once the database clock has reached `exact` (sleeping in the database). */
  async waitUntil(tx: Tx, exact: string): Promise<void> {
    for (;;) {
      const [row] = await this.sql.rows<{ reached: boolean }>(WAIT_UNTIL, [exact], tx);
      if (row?.reached) return;
    }
  }

  async drop(tx: Tx, entries: readonly ClaimedDueEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.sql.rows(
      DELETE_DUE_ENTRIES,
      [
        entries.map((e) => e.shard),
        entries.map((e) => e.dueAtExact),
        entries.map((e) => e.scheduleId),
      ],
      tx,
    );
  }

  /**
   * Adds entries (each schedule's previous one already dropped by the caller); wakes the pollers
   * when one is due soon (see WAKE_HORIZON_MS).
   */
  async add(tx: Tx, entries: readonly DueEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.sql.rows(
      INSERT_DUE_ENTRIES,
      [
        entries.map((e) => shardOf(e.scheduleId)),
        entries.map((e) => e.dueAt),
        entries.map((e) => e.scheduleId),
        entries.map((e) => e.tenantId),
        entries.map((e) => e.revision),
        WAKE_HORIZON_MS,
      ],
      tx,
    );
  }

  /** The earliest due instant in the given shards (for the poller's wake-up timer). */
  async nextDueIn(shards: readonly number[]): Promise<Date | null> {
    return (await this.earliest(shards, null, null))?.at ?? null;
  }

  private async earliest(
    shards: readonly number[],
    after: string | null,
    prepared: string | null,
  ): Promise<{ at: Date; waitMs: number } | null> {
    if (shards.length === 0) return null;
    const [row] = await this.sql.rows<{ next_due_at: Date | null; wait_ms: number | null }>(
      NEXT_DUE_IN_SHARDS,
      [shards, after, prepared],
    );
    return row?.next_due_at ? { at: row.next_due_at, waitMs: row.wait_ms ?? 0 } : null;
  }

  async remove(tx: Tx, scheduleId: string): Promise<void> {
    await this.sql.rows(REMOVE_DUE_ENTRIES, [scheduleId], tx);
  }

  async removeMany(tx: Tx, scheduleIds: readonly string[]): Promise<void> {
    if (scheduleIds.length === 0) return;
    await this.sql.rows(REMOVE_DUE_ENTRIES_OF, [scheduleIds], tx);
  }
}
