import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsInt, IsISO8601, IsOptional, Max, Min } from 'class-validator';
import {
  BACKFILL_LIMITS,
  BACKFILL_ORDERS,
  BACKFILL_STATUSES,
  INSTANT_ACTION_CODES,
  REPROCESS_MODES,
  type Backfill,
  type BackfillOrder,
  type PlannedInstant,
  type ReprocessMode,
} from '../../backfills';
import { OVERLAP_POLICIES, type OverlapPolicy } from '../../overlap';

export class CreateBackfillDto {
  @ApiProperty({ format: 'date-time', description: 'first instant considered (inclusive)' })
  @IsISO8601({ strict: true })
  from: string;

  @ApiProperty({
    format: 'date-time',
    description: `last instant considered (inclusive, not in the future); at most ${BACKFILL_LIMITS.maxInstants} instants in the range`,
  })
  @IsISO8601({ strict: true })
  to: string;

  @ApiPropertyOptional({
    enum: REPROCESS_MODES,
    default: 'missing',
    description:
      'missing: instants no run stands for; failed: also those whose run ended FAILED or ' +
      'UNKNOWN; all: every instant that has no active run',
  })
  @IsOptional()
  @IsIn(REPROCESS_MODES)
  reprocess?: ReprocessMode;

  @ApiPropertyOptional({
    enum: OVERLAP_POLICIES,
    default: 'buffer_one',
    description:
      'buffer_one: one run of the schedule at a time, each backfilled run waits for the active ' +
      "one; skip: an instant whose turn comes while another of the schedule's runs is active is " +
      'skipped; allow: up to maxConcurrent at once (the schedule must allow overlap too)',
  })
  @IsOptional()
  @IsIn(OVERLAP_POLICIES)
  overlapPolicy?: OverlapPolicy;

  @ApiPropertyOptional({ default: 1, minimum: 1, maximum: BACKFILL_LIMITS.maxConcurrent })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(BACKFILL_LIMITS.maxConcurrent)
  maxConcurrent?: number;

  @ApiPropertyOptional({ enum: BACKFILL_ORDERS, default: 'oldest' })
  @IsOptional()
  @IsIn(BACKFILL_ORDERS)
  order?: BackfillOrder;

  @ApiPropertyOptional({
    default: false,
    description: 'answer the exact instants and what would happen to each; write nothing',
  })
  @IsOptional()
  @IsBoolean()
  dryRun?: boolean;
}

export class PlannedInstantDto {
  @ApiProperty({ format: 'date-time' }) at: string;
  @ApiProperty({ example: '2026-11-01T01:30:00-05:00', description: 'local time with offset' })
  local: string;
  @ApiProperty({ enum: INSTANT_ACTION_CODES }) action: string;
  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true }) existingRunId:
    string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) existingState: string | null;

  static from(p: PlannedInstant): PlannedInstantDto {
    return {
      at: p.at.toISOString(),
      local: p.local,
      action: p.action,
      existingRunId: p.existingRun?.id ?? null,
      existingState: p.existingRun?.state ?? null,
    };
  }
}

export class DryRunDto {
  @ApiProperty({ type: [PlannedInstantDto] }) instants: PlannedInstantDto[];
}

export class BackfillDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) scheduleId: string;
  @ApiProperty({ enum: BACKFILL_STATUSES }) status: string;
  @ApiProperty({ format: 'date-time' }) from: string;
  @ApiProperty({ format: 'date-time' }) to: string;
  @ApiProperty({ enum: REPROCESS_MODES }) reprocess: string;
  @ApiProperty({ enum: OVERLAP_POLICIES }) overlapPolicy: string;
  @ApiProperty() maxConcurrent: number;
  @ApiProperty({ enum: BACKFILL_ORDERS }) order: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer' },
    description: 'instants of the range by what was planned for each',
  })
  plan: Record<string, number>;
  @ApiProperty({ description: 'instants to run (plan.run + plan.rerun)' }) total: number;
  @ApiProperty({ description: 'of those, how many had their turn' }) processed: number;
  @ApiProperty({ description: 'runs created' }) created: number;
  @ApiProperty({ description: 'instants skipped when their turn came (or cancelled)' })
  skipped: number;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer' },
    description: 'its runs by state',
    example: { SUCCEEDED: 3, QUEUED: 1 },
  })
  runs: Record<string, number>;
  @ApiProperty({ type: String, nullable: true }) requestedByApiKeyId: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) finishedAt: string | null;
  @ApiProperty({ example: { self: '/backfills/…', runs: '/runs?trigger=backfill&scheduleId=…' } })
  links: { self: string; runs: string };

  static from(b: Backfill): BackfillDto {
    return {
      id: b.id,
      scheduleId: b.scheduleId,
      status: b.status,
      from: b.from.toISOString(),
      to: b.to.toISOString(),
      reprocess: b.reprocess,
      overlapPolicy: b.overlapPolicy,
      maxConcurrent: b.maxConcurrent,
      order: b.order,
      plan: b.plan,
      total: b.plan.run + b.plan.rerun,
      processed: b.processed,
      created: b.created,
      skipped: b.skipped,
      runs: b.runs,
      requestedByApiKeyId: b.requestedByApiKeyId,
      createdAt: b.createdAt.toISOString(),
      finishedAt: b.finishedAt?.toISOString() ?? null,
      links: {
        self: `/backfills/${b.id}`,
        runs: `/runs?trigger=backfill&scheduleId=${b.scheduleId}`,
      },
    };
  }
}
