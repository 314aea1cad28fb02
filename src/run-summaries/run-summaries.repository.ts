import { Injectable } from '@nestjs/common';
import { SqlRunner, type Tx } from '../database';
import type { RunReason, RunState } from '../run-vocabulary';
import { histogramOf } from './lag-histogram';
import {
  CLAIM_RANGE,
  LIVE_SUMMARIES,
  STORED_SUMMARIES,
  SUMMARISE_RANGE,
} from './run-summaries.sql';
import type { SummaryRange } from './run-summary';
import type { SummaryGroup } from './summary-slices';

interface GroupRow {
  day: string;
  state: RunState;
  reason: RunReason | null;
  lag_slices: number;
  runs: number;
  attempts: number;
  lag_count: number;
  lag_p50_ms: string | null;
  lag_p99_ms: string | null;
  lag_max_ms: string | null;
  lag_buckets: number[];
  lag_bucket_counts: number[];
}

@Injectable()
export class RunSummariesRepository {
  constructor(private readonly sql: SqlRunner) {}

  /** Takes [from, to) in the ledger; false when it was summarised before (CLAIM_RANGE). */
  async claimRange(tx: Tx, from: Date, to: Date): Promise<boolean> {
    return (await this.sql.rows(CLAIM_RANGE, [from, to], tx)).length > 0;
  }

  /** Writes the range's summaries; returns how many runs they count (SUMMARISE_RANGE). */
  async summarise(tx: Tx, from: Date, to: Date): Promise<number> {
    const [row] = await this.sql.rows<{ runs: number }>(SUMMARISE_RANGE, [from, to], tx);
    return row?.runs ?? 0;
  }

  /** A schedule's groups from its rows and from its summaries, each folded per source. */
  async groups(
    tenantId: string,
    scheduleId: string,
    range: SummaryRange,
  ): Promise<{ live: SummaryGroup[]; stored: SummaryGroup[] }> {
    const params = [tenantId, scheduleId, range.fromDay, range.toDay];
    const [live, stored] = await Promise.all([
      this.sql.rows<GroupRow>(LIVE_SUMMARIES, params),
      this.sql.rows<GroupRow>(STORED_SUMMARIES, params),
    ]);
    return { live: live.map(toGroup), stored: stored.map(toGroup) };
  }
}

function toGroup(row: GroupRow): SummaryGroup {
  return {
    day: row.day,
    state: row.state,
    reason: row.reason,
    lagSlices: row.lag_slices,
    runs: row.runs,
    attempts: row.attempts,
    lagCount: row.lag_count,
    lagP50Ms: numberOrNull(row.lag_p50_ms),
    lagP99Ms: numberOrNull(row.lag_p99_ms),
    lagMaxMs: numberOrNull(row.lag_max_ms),
    histogram: histogramOf(row.lag_buckets, row.lag_bucket_counts),
  };
}

function numberOrNull(value: string | number | null): number | null {
  return value === null ? null : Number(value);
}
