import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ProblemDto } from '../../common';
import { SCHEDULE_LIMITS } from '../../schedules';
import { CreateScheduleDto } from './schedule-request.dto';
import { ScheduleDto } from './schedule-response.dto';

/**
 * One item of a batch. The envelope's rules are readBatchEnvelope's (batch-envelope.ts); each
 * `schedule` is then checked on its own against CreateScheduleDto, so a bad schedule is that
 * item's 400, not the whole request's.
 */
export class BatchItemDto {
  @ApiProperty({ description: 'as the Idempotency-Key header of POST /schedules', maxLength: 255 })
  idempotencyKey: string;

  @ApiProperty({ type: CreateScheduleDto, description: 'the body of POST /schedules' })
  schedule: Record<string, unknown>;
}

/** The body of POST /schedules/batch (documentation: readBatchEnvelope checks it). */
export class BatchCreateSchedulesDto {
  @ApiProperty({ type: [BatchItemDto], minItems: 1, maxItems: SCHEDULE_LIMITS.maxBatchItems })
  items: BatchItemDto[];
}

export class BatchItemResultDto {
  @ApiProperty({ example: 201, description: "201, or the 4xx status of the item's problem" })
  status: number;

  @ApiPropertyOptional({ type: ScheduleDto, description: 'with 201' })
  schedule?: ScheduleDto;

  @ApiPropertyOptional({ type: ProblemDto, description: 'with a 4xx' })
  problem?: ProblemDto;
}

export class BatchResultDto {
  @ApiProperty({ type: [BatchItemResultDto], description: 'in the order of the request' })
  items: BatchItemResultDto[];
}
