import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsISO8601 } from 'class-validator';
import {
  DEFAULT_SUMMARY_DAYS,
  MAX_SUMMARY_DAYS,
  type DaySummary,
  type LagSummary,
  type ScheduleSummary,
} from '../../run-summaries';
import { RUN_REASON_CODES, RUN_STATES } from '../../run-vocabulary';
import { Absentable } from '../common/page-query.dto';

export class ScheduleSummaryQueryDto {
  @ApiPropertyOptional({
    description:
      'A date (YYYY-MM-DD, UTC) or an instant: the answer starts with the UTC day it falls in. ' +
      `Default: ${DEFAULT_SUMMARY_DAYS} days before to. At most ${MAX_SUMMARY_DAYS} days before to.`,
    example: '2026-01-01',
  })
  @Absentable()
  @IsISO8601({ strict: true })
  from?: string;

  @ApiPropertyOptional({
    description:
      'A date or an instant, exclusive: the answer ends with the UTC day before it (or the day ' +
      'it falls in, for an instant past midnight). Default: now.',
    example: '2026-01-08',
  })
  @Absentable()
  @IsISO8601({ strict: true })
  to?: string;
}

/** The query's bounds as instants (a date is its UTC midnight). */
export function summaryBounds(query: ScheduleSummaryQueryDto): { from?: Date; to?: Date } {
  const date = (value: string | undefined) => (value === undefined ? undefined : new Date(value));
  return { from: date(query.from), to: date(query.to) };
}

export class LagSummaryDto {
  @ApiProperty({ example: 1440, description: 'Runs with a measured lag (a first attempt)' })
  count: number;

  @ApiProperty({ type: 'integer', nullable: true, example: 12 })
  p50Ms: number | null;

  @ApiProperty({ type: 'integer', nullable: true, example: 85 })
  p99Ms: number | null;

  @ApiProperty({ type: 'integer', nullable: true, example: 240, description: 'Always exact' })
  maxMs: number | null;

  @ApiProperty({
    description:
      'true: p50/p99 are exact; false: read from a log-scale histogram (within about 4.4 %), ' +
      'because the day was summarised in several slices or merges several outcomes',
  })
  exact: boolean;
}

export class OutcomeSummaryDto {
  @ApiProperty({ enum: RUN_STATES })
  state: string;

  @ApiProperty({ enum: RUN_REASON_CODES, nullable: true, type: 'string' })
  reason: string | null;

  @ApiProperty({ example: 1440 })
  runs: number;

  @ApiProperty({ example: 1452 })
  attempts: number;

  @ApiProperty({ type: LagSummaryDto })
  lag: LagSummaryDto;
}

export class DaySummaryDto {
  @ApiProperty({ format: 'date', example: '2026-01-01', description: 'UTC day of scheduledAt' })
  day: string;

  @ApiProperty({ example: 1440 })
  runs: number;

  @ApiProperty({ example: 1452 })
  attempts: number;

  @ApiProperty({
    type: LagSummaryDto,
    description: 'Due-to-start lag: first attempt start minus firesAt (poller and manual runs)',
  })
  lag: LagSummaryDto;

  @ApiProperty({ type: [OutcomeSummaryDto], description: 'By state and reason' })
  outcomes: OutcomeSummaryDto[];
}

export class ScheduleSummaryDto {
  @ApiProperty({ format: 'uuid' })
  scheduleId: string;

  @ApiProperty({ format: 'date', description: 'First day answered (UTC)' })
  fromDay: string;

  @ApiProperty({ format: 'date', description: 'The day after the last day answered (UTC)' })
  toDay: string;

  @ApiProperty({ type: [DaySummaryDto], description: 'Every day of the range, oldest first' })
  days: DaySummaryDto[];

  static from(summary: ScheduleSummary): ScheduleSummaryDto {
    return {
      scheduleId: summary.scheduleId,
      fromDay: summary.fromDay,
      toDay: summary.toDay,
      days: summary.days.map(dayDto),
    };
  }
}

function dayDto(day: DaySummary): DaySummaryDto {
  return {
    day: day.day,
    runs: day.runs,
    attempts: day.attempts,
    lag: lagDto(day.lag),
    outcomes: day.outcomes.map((o) => ({ ...o, lag: lagDto(o.lag) })),
  };
}

function lagDto(lag: LagSummary): LagSummaryDto {
  return { ...lag };
}
