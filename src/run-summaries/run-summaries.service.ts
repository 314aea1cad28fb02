import { Injectable } from '@nestjs/common';
import { Clock, ValidationError } from '../common';
import { SchedulesService } from '../schedules';
import { RunSummariesRepository } from './run-summaries.repository';
import {
  DEFAULT_SUMMARY_DAYS,
  MAX_SUMMARY_DAYS,
  type ScheduleSummary,
  type SummaryRange,
} from './run-summary';
import { foldDays } from './summary-slices';

const DAY_MS = 86_400_000;

/**
 * A schedule's history day by day, answered from its summaries and its rows together: days
 * already summarised from run_summaries, days still kept as rows from the rows (one bounded
 * statement), a day partly in both merged.
 */
@Injectable()
export class RunSummariesService {
  constructor(
    private readonly summaries: RunSummariesRepository,
    private readonly schedules: SchedulesService,
    private readonly clock: Clock,
  ) {}

  /**
   * Every UTC day that meets [from, to) (whole days: a day is answered with all its runs).
   * Without `to`, up to now; without `from`, the DEFAULT_SUMMARY_DAYS days before `to`.
   */
  async summary(
    tenantId: string,
    scheduleId: string,
    bounds: { from?: Date; to?: Date },
  ): Promise<ScheduleSummary> {
    const range = summaryRange(bounds, this.clock.now());
    await this.schedules.get(tenantId, scheduleId);
    const { live, stored } = await this.summaries.groups(tenantId, scheduleId, range);
    return {
      scheduleId,
      ...range,
      days: foldDays(range.fromDay, range.toDay, [...stored, ...live]),
    };
  }
}

/** [from, to) widened to whole UTC days, checked against MAX_SUMMARY_DAYS. */
export function summaryRange(bounds: { from?: Date; to?: Date }, now: Date): SummaryRange {
  const to = bounds.to ?? now;
  const toDayMs = Math.ceil(to.getTime() / DAY_MS) * DAY_MS;
  const fromDayMs = bounds.from
    ? Math.floor(bounds.from.getTime() / DAY_MS) * DAY_MS
    : toDayMs - DEFAULT_SUMMARY_DAYS * DAY_MS;
  if (bounds.from && bounds.from.getTime() >= to.getTime()) {
    throw new ValidationError('from must be before to', [
      { field: 'from', message: 'must be before to' },
    ]);
  }
  if ((toDayMs - fromDayMs) / DAY_MS > MAX_SUMMARY_DAYS) {
    throw new ValidationError(`a summary covers at most ${MAX_SUMMARY_DAYS} days`, [
      { field: 'from', message: `at most ${MAX_SUMMARY_DAYS} days before to` },
    ]);
  }
  return { fromDay: dayOf(fromDayMs), toDay: dayOf(toDayMs) };
}

function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
