import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsISO8601,
  IsObject,
  IsOptional,
  IsUUID,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import {
  BULK_KINDS,
  BULK_OUTCOME_CODES,
  BULK_STATUSES,
  DEFAULT_BULK_RUNS,
  MAX_BULK_RUNS,
  type BulkItem,
  type BulkOperation,
} from '../../bulk-operations';
import { ValidationError } from '../../common';
import { RUN_TRIGGERS, type RunFilter, type RunTrigger } from '../../occurrences';
import { RUN_REASON_CODES, RUN_STATES, type RunReason, type RunState } from '../../run-vocabulary';
import { Absentable, PageQueryDto } from '../common/page-query.dto';

/** The filters of GET /runs and of a bulk operation's selection. */
export class RunFilterDto {
  @ApiPropertyOptional({ enum: RUN_STATES })
  @Absentable()
  @IsIn(RUN_STATES)
  state?: RunState;

  @ApiPropertyOptional({ enum: RUN_REASON_CODES })
  @Absentable()
  @IsIn(RUN_REASON_CODES)
  reason?: RunReason;

  @ApiPropertyOptional({ format: 'uuid' })
  @Absentable()
  @IsUUID()
  scheduleId?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'runs of the schedules that call it' })
  @Absentable()
  @IsUUID()
  targetId?: string;

  @ApiPropertyOptional({ enum: RUN_TRIGGERS })
  @Absentable()
  @IsIn(RUN_TRIGGERS)
  trigger?: RunTrigger;

  @ApiPropertyOptional({ format: 'date-time', description: 'scheduledAt at or after' })
  @Absentable()
  @IsISO8601({ strict: true })
  scheduledFrom?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'scheduledAt before' })
  @Absentable()
  @IsISO8601({ strict: true })
  scheduledTo?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'finishedAt at or after' })
  @Absentable()
  @IsISO8601({ strict: true })
  finishedFrom?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'finishedAt before' })
  @Absentable()
  @IsISO8601({ strict: true })
  finishedTo?: string;
}

export class SearchRunsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: RUN_STATES }) @Absentable() @IsIn(RUN_STATES) state?: RunState;
  @ApiPropertyOptional({ enum: RUN_REASON_CODES })
  @Absentable()
  @IsIn(RUN_REASON_CODES)
  reason?: RunReason;
  @ApiPropertyOptional({ format: 'uuid' }) @Absentable() @IsUUID() scheduleId?: string;
  @ApiPropertyOptional({ format: 'uuid' }) @Absentable() @IsUUID() targetId?: string;
  @ApiPropertyOptional({ enum: RUN_TRIGGERS })
  @Absentable()
  @IsIn(RUN_TRIGGERS)
  trigger?: RunTrigger;
  @ApiPropertyOptional({ format: 'date-time' })
  @Absentable()
  @IsISO8601({ strict: true })
  scheduledFrom?: string;
  @ApiPropertyOptional({ format: 'date-time' })
  @Absentable()
  @IsISO8601({ strict: true })
  scheduledTo?: string;
  @ApiPropertyOptional({ format: 'date-time' })
  @Absentable()
  @IsISO8601({ strict: true })
  finishedFrom?: string;
  @ApiPropertyOptional({ format: 'date-time' })
  @Absentable()
  @IsISO8601({ strict: true })
  finishedTo?: string;
}

export class BulkRunsDto {
  @ApiPropertyOptional({ type: RunFilterDto, description: 'the runs to act on (xor ids)' })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => RunFilterDto)
  filter?: RunFilterDto;

  @ApiPropertyOptional({
    type: [String],
    description: `run ids (xor filter), at most ${MAX_BULK_RUNS}`,
  })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_BULK_RUNS)
  @IsUUID('all', { each: true })
  ids?: string[];

  @ApiPropertyOptional({
    minimum: 1,
    maximum: MAX_BULK_RUNS,
    default: DEFAULT_BULK_RUNS,
    description: 'at most this many runs, oldest scheduledAt first',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_BULK_RUNS)
  limit?: number;
}

/** Filter fields as the ledger takes them; dates parsed, a range that runs backwards refused. */
export function toRunFilter(dto: RunFilterDto): RunFilter {
  const date = (value: string | undefined) => (value === undefined ? undefined : new Date(value));
  const filter: RunFilter = {
    state: dto.state,
    reason: dto.reason,
    scheduleId: dto.scheduleId?.toLowerCase(),
    targetId: dto.targetId?.toLowerCase(),
    trigger: dto.trigger,
    scheduledFrom: date(dto.scheduledFrom),
    scheduledTo: date(dto.scheduledTo),
    finishedFrom: date(dto.finishedFrom),
    finishedTo: date(dto.finishedTo),
  };
  for (const [from, to] of [
    ['scheduledFrom', 'scheduledTo'],
    ['finishedFrom', 'finishedTo'],
  ] as const) {
    if (filter[from] && filter[to] && filter[from] >= filter[to]) {
      throw new ValidationError('the filter is invalid', [
        { field: to, message: `${to} must be after ${from}` },
      ]);
    }
  }
  return filter;
}

/** A bulk body's selection: ids, or a filter that names at least one condition. */
export function toBulkSelection(dto: BulkRunsDto): { filter: RunFilter; limit: number } {
  const limit = dto.limit ?? (dto.ids ? dto.ids.length : DEFAULT_BULK_RUNS);
  if ((dto.ids === undefined) === (dto.filter === undefined)) {
    throw new ValidationError('the selection is invalid', [
      { field: 'filter', message: 'give exactly one of filter and ids' },
    ]);
  }
  if (dto.ids) return { filter: { ids: dto.ids.map((id) => id.toLowerCase()) }, limit };
  const filter = toRunFilter(dto.filter!);
  if (Object.values(filter).every((value) => value === undefined)) {
    throw new ValidationError('the selection is invalid', [
      { field: 'filter', message: 'a filter names at least one condition (or give ids)' },
    ]);
  }
  return { filter, limit };
}

export class BulkOperationDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: BULK_KINDS }) kind: string;
  @ApiProperty({ enum: BULK_STATUSES }) status: string;
  @ApiProperty({ description: 'runs selected when it was created' }) total: number;
  @ApiProperty() processed: number;
  @ApiProperty({ description: 'replayed, or cancelled (or asked to stop)' }) succeeded: number;
  @ApiProperty({ description: 'left as they were, each with why (see items)' }) skipped: number;
  @ApiProperty({ type: String, nullable: true }) requestedByApiKeyId: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) finishedAt: string | null;
  @ApiProperty({ example: { self: '/bulk-operations/…', items: '/bulk-operations/…/items' } })
  links: { self: string; items: string };

  static from(operation: BulkOperation): BulkOperationDto {
    return {
      id: operation.id,
      kind: operation.kind,
      status: operation.status,
      total: operation.total,
      processed: operation.processed,
      succeeded: operation.succeeded,
      skipped: operation.skipped,
      requestedByApiKeyId: operation.requestedByApiKeyId,
      createdAt: operation.createdAt.toISOString(),
      finishedAt: operation.finishedAt?.toISOString() ?? null,
      links: {
        self: `/bulk-operations/${operation.id}`,
        items: `/bulk-operations/${operation.id}/items`,
      },
    };
  }
}

export class BulkItemDto {
  @ApiProperty({ format: 'uuid' }) runId: string;
  @ApiProperty({
    type: String,
    enum: BULK_OUTCOME_CODES,
    nullable: true,
    description: 'null: not yet processed',
  })
  outcome: string | null;
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'the replay run' })
  resultRunId: string | null;

  static from(item: BulkItem): BulkItemDto {
    return { runId: item.runId, outcome: item.outcome, resultRunId: item.resultRunId };
  }
}

export class BulkItemPageDto {
  @ApiProperty({ type: [BulkItemDto] }) items: BulkItemDto[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
}
