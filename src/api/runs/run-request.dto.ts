import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsInt, IsString, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { MAX_ATTEMPT_ERROR_LENGTH } from '../../attempts';
import { RUN_STATES, type RunState } from '../../run-vocabulary';
import { Absentable, PageQueryDto } from '../common/page-query.dto';

export class ListRunsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: RUN_STATES, description: 'only runs in this state' })
  @Absentable()
  @IsIn(RUN_STATES)
  state?: RunState;
}

const FENCING_TOKEN = {
  description: 'the fencing token your claim returned',
  minimum: 1,
  example: 3,
} as const;

export class HeartbeatRunDto {
  @ApiProperty(FENCING_TOKEN)
  @IsInt()
  @Min(1)
  fencingToken: number;
}

export const WORKER_OUTCOMES = ['succeeded', 'failed', 'unknown', 'cancelled'] as const;
export type WorkerOutcome = (typeof WORKER_OUTCOMES)[number];

export class CompleteRunDto {
  @ApiProperty(FENCING_TOKEN)
  @IsInt()
  @Min(1)
  fencingToken: number;

  @ApiProperty({
    enum: WORKER_OUTCOMES,
    description:
      'succeeded: the target confirmed. failed: it did not act (or refused). unknown: it may ' +
      'have acted and cannot tell. cancelled: you stopped because the heartbeat reported a ' +
      'cancel request.',
  })
  @IsIn(WORKER_OUTCOMES)
  outcome: WorkerOutcome;

  @ApiPropertyOptional({
    default: false,
    description:
      'failed: a transient failure worth retrying. unknown: the target deduplicates by the run ' +
      'id, so repeating is safe.',
  })
  @Absentable()
  @IsBoolean()
  retryable?: boolean;

  @ApiPropertyOptional({ type: String, maxLength: MAX_ATTEMPT_ERROR_LENGTH, nullable: true })
  @ValidateIf((_object, value) => value !== undefined && value !== null)
  @IsString()
  @MaxLength(MAX_ATTEMPT_ERROR_LENGTH)
  error?: string | null;

  @ApiPropertyOptional({ minimum: 100, maximum: 599, description: "the target's HTTP status" })
  @Absentable()
  @IsInt()
  @Min(100)
  @Max(599)
  httpStatus?: number;

  @ApiPropertyOptional({ minimum: 0, description: 'how long the target call took' })
  @Absentable()
  @IsInt()
  @Min(0)
  @Max(86_400_000)
  durationMs?: number;
}
