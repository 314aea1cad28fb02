import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsInt,
  IsISO8601,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { NoControlCharacters } from '../../common';
import { OVERLAP_POLICIES } from '../../overlap';
import { RUN_PRIORITIES, type RunPriority } from '../../run-vocabulary';
import { MISSED_RUN_POLICIES, SCHEDULE_LIMITS } from '../../schedules';
import { PageQueryDto } from '../common/page-query.dto';

export class DstPolicyDto {
  @ApiPropertyOptional({ enum: ['skip', 'shift_forward'], default: 'skip' })
  @IsOptional()
  @IsIn(['skip', 'shift_forward'])
  nonexistent?: 'skip' | 'shift_forward';

  @ApiPropertyOptional({ enum: ['first', 'last', 'both'], default: 'first' })
  @IsOptional()
  @IsIn(['first', 'last', 'both'])
  repeated?: 'first' | 'last' | 'both';
}

export class RetryPolicyDto {
  @ApiPropertyOptional({ default: 3, minimum: 1, maximum: 20 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(20)
  maxAttempts?: number;

  @ApiPropertyOptional({ default: 1000, minimum: 100, maximum: 3_600_000 })
  @IsOptional()
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  initialDelayMs?: number;

  @ApiPropertyOptional({ default: 300000, minimum: 100, maximum: 86_400_000 })
  @IsOptional()
  @IsInt()
  @Min(100)
  @Max(86_400_000)
  maxDelayMs?: number;

  @ApiPropertyOptional({ default: 3600, minimum: 1, maximum: 604_800 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(604_800)
  retryDeadlineSeconds?: number;
}

/** `90m`, `1h30m`, `45s`, `2d`: units d, h, m, s, largest first, each at most once. */
export const EVERY_PATTERN = /^(?:(\d{1,6})d)?(?:(\d{1,6})h)?(?:(\d{1,7})m)?(?:(\d{1,9})s)?$/;

/** The recurrence fields that a preview shares with a schedule (beside cron and timezone). */
class RecurrenceExtrasDto {
  @ApiPropertyOptional({
    type: String,
    example: '90m',
    nullable: true,
    description:
      'Interval schedule (xor runAt and cron): a duration in d, h, m, s (`90m`, `1h30m`, `2d`) ' +
      'between runs, counted from anchorAt. Absolute time: DST does not stretch it.',
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @MaxLength(40)
  @Matches(EVERY_PATTERN, { message: 'every must be a duration such as 90m, 1h30m, 45s or 2d' })
  every?: string | null;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'With every: the first run; later runs are anchorAt + k × every (default: now)',
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsISO8601({ strict: true })
  anchorAt?: string | null;

  @ApiPropertyOptional({
    type: [String],
    example: ['2027-12-25', '2028-01-01'],
    nullable: true,
    description:
      "Local dates (YYYY-MM-DD, in the schedule's timezone) on which nothing runs; xor calendarId",
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsArray()
  @ArrayMaxSize(SCHEDULE_LIMITS.maxExcludeDates)
  @IsString({ each: true })
  @MaxLength(10, { each: true })
  excludeDates?: string[] | null;

  @ApiPropertyOptional({
    type: String,
    format: 'uuid',
    nullable: true,
    description: "One of the tenant's calendars (POST /calendars) whose dates are excluded",
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsUUID()
  calendarId?: string | null;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 1,
    maximum: SCHEDULE_LIMITS.maxRuns,
    description:
      'The schedule completes after creating this many runs (instants skipped for overlap, ' +
      'missed or a deadline, manual triggers and backfills do not count)',
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsInt()
  @Min(1)
  @Max(SCHEDULE_LIMITS.maxRuns)
  maxRuns?: number | null;
}

/** Fields shared by create and edit; on edit every field is optional. */
export class ScheduleFieldsDto extends RecurrenceExtrasDto {
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'JSON object sent to the target (at most 64 KiB)',
    example: { report: 'daily' },
  })
  @IsOptional()
  @IsObject()
  payload?: Record<string, unknown>;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    format: 'date-time',
    example: '2027-01-01T09:00:00Z',
    description: 'One-time: xor cron',
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsISO8601({ strict: true })
  runAt?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: '0 9 * * *',
    description: '5 fields, or 6 with seconds first',
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @MaxLength(120)
  @NoControlCharacters()
  cron?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'Europe/Berlin',
    description: 'IANA timezone, with cron',
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @MaxLength(64)
  timezone?: string | null;

  @ApiPropertyOptional({ type: DstPolicyDto })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => DstPolicyDto)
  dstPolicy?: DstPolicyDto;

  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsISO8601({ strict: true })
  startAt?: string | null;

  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsISO8601({ strict: true })
  endAt?: string | null;

  @ApiPropertyOptional({ enum: MISSED_RUN_POLICIES, default: 'latest' })
  @IsOptional()
  @IsIn(MISSED_RUN_POLICIES)
  missedRunPolicy?: (typeof MISSED_RUN_POLICIES)[number];

  @ApiPropertyOptional({ default: 10, minimum: 1, maximum: SCHEDULE_LIMITS.maxCatchUp })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(SCHEDULE_LIMITS.maxCatchUp)
  maxCatchUp?: number;

  @ApiPropertyOptional({ enum: OVERLAP_POLICIES, default: 'skip' })
  @IsOptional()
  @IsIn(OVERLAP_POLICIES)
  overlapPolicy?: (typeof OVERLAP_POLICIES)[number];

  @ApiPropertyOptional({ type: RetryPolicyDto })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => RetryPolicyDto)
  retryPolicy?: RetryPolicyDto;

  @ApiPropertyOptional({
    enum: RUN_PRIORITIES,
    default: 'normal',
    description:
      'Within the tenant, waiting high runs are admitted before normal and low ones, and a share ' +
      "of the fleet's slots is kept for high runs.",
  })
  @IsOptional()
  @IsIn(RUN_PRIORITIES)
  priority?: RunPriority;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 1,
    maximum: SCHEDULE_LIMITS.maxStartDeadlineSeconds,
    description:
      'A run that cannot start within this many seconds of its instant is recorded SKIPPED ' +
      '(deadline_exceeded) and never called. Unset or null: no deadline.',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(SCHEDULE_LIMITS.maxStartDeadlineSeconds)
  startDeadlineSeconds?: number | null;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 1,
    maximum: 100,
    description:
      'Pause the schedule after this many consecutive runs end FAILED or UNKNOWN (within a ' +
      'relay round of the last one): status paused, pausedReason consecutive_failures, a note ' +
      'naming the runs, a revision by dueline. Resume with an ordinary PATCH (If-Match), which ' +
      'starts the count again. Unset or null: never.',
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsInt()
  @Min(1)
  @Max(100)
  pauseAfterConsecutiveFailures?: number | null;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 0,
    maximum: SCHEDULE_LIMITS.maxLateAfterSeconds,
    description:
      'A run that starts (is claimed for its first attempt) more than this many seconds after ' +
      'its planned fire instant is late: subscribers of run.late hear of it. Unset or null: ' +
      'no late events.',
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsInt()
  @Min(0)
  @Max(SCHEDULE_LIMITS.maxLateAfterSeconds)
  lateAfterSeconds?: number | null;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { team: 'billing' },
    description:
      `Up to ${SCHEDULE_LIMITS.maxLabels} key/value labels; filter with GET /schedules?label=key:value. ` +
      'Keys: letters, digits and ._/-; values: strings up to 128 characters.',
  })
  @IsOptional()
  @IsObject()
  labels?: Record<string, string>;

  @ApiPropertyOptional({
    minimum: 0,
    maximum: SCHEDULE_LIMITS.maxFlexibleWindowSeconds,
    default: 0,
    description:
      'Each run may fire at a planned instant up to this many seconds after its nominal one ' +
      '(deterministic per schedule and instant, never before it; shown as firesAt), to spread ' +
      'minute-boundary bursts. 0: exactly on time. Must be shorter than the gap between two runs.',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(SCHEDULE_LIMITS.maxFlexibleWindowSeconds)
  flexibleWindowSeconds?: number;
}

export class CreateScheduleDto extends ScheduleFieldsDto {
  @ApiProperty({ example: 'nightly-report', minLength: 1, maxLength: 200 })
  @IsString()
  @Length(1, 200)
  @NoControlCharacters()
  name: string;

  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  targetId: string;
}

export class UpdateScheduleDto extends ScheduleFieldsDto {
  @ApiPropertyOptional({ example: 'nightly-report', minLength: 1, maxLength: 200 })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  @NoControlCharacters()
  name?: string;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID()
  targetId?: string;

  @ApiPropertyOptional({
    enum: ['active', 'paused', 'cancelled'],
    description: 'pause, resume or cancel',
  })
  @IsOptional()
  @IsIn(['active', 'paused', 'cancelled'])
  status?: 'active' | 'paused' | 'cancelled';
}

export class PreviewRequestDto extends RecurrenceExtrasDto {
  @ApiPropertyOptional({ example: '30 1 * * *', description: 'xor every' })
  @IsOptional()
  @IsString()
  @MaxLength(120)
  @NoControlCharacters()
  cron?: string;

  @ApiPropertyOptional({ example: 'America/New_York', description: 'required with cron' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  timezone?: string;

  @ApiPropertyOptional({ type: DstPolicyDto })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => DstPolicyDto)
  dstPolicy?: DstPolicyDto;

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'preview instants after this (default now)',
  })
  @IsOptional()
  @IsISO8601({ strict: true })
  from?: string;

  @ApiPropertyOptional({ default: 10, minimum: 1, maximum: SCHEDULE_LIMITS.maxPreviewCount })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(SCHEDULE_LIMITS.maxPreviewCount)
  count?: number;

  @ApiPropertyOptional({ format: 'date-time' })
  @IsOptional()
  @IsISO8601({ strict: true })
  startAt?: string;

  @ApiPropertyOptional({ format: 'date-time' })
  @IsOptional()
  @IsISO8601({ strict: true })
  endAt?: string;
}

export class ListSchedulesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: ['active', 'paused', 'cancelled', 'completed'] })
  @IsOptional()
  @IsIn(['active', 'paused', 'cancelled', 'completed'])
  status?: 'active' | 'paused' | 'cancelled' | 'completed';

  @ApiPropertyOptional({
    type: [String],
    example: ['team:billing'],
    description: 'key:value; repeat it for schedules that carry every label given (at most 10)',
  })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (Array.isArray(value) ? value : [value]))
  @IsArray()
  @ArrayMaxSize(10)
  @IsString({ each: true })
  @MaxLength(200, { each: true })
  @Matches(/^[^:]+:.*$/, { each: true, message: 'label must be key:value' })
  label?: string[];
}

export class PreviewQueryDto {
  @ApiPropertyOptional({ default: 10, minimum: 1, maximum: SCHEDULE_LIMITS.maxPreviewCount })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(SCHEDULE_LIMITS.maxPreviewCount)
  count?: number;
}
