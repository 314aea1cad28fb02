import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsObject,
  IsString,
  Matches,
  ValidateNested,
} from 'class-validator';
import { ProblemDto } from '../../common';
import { SCHEDULE_LIMITS } from '../../schedules';
import { IDEMPOTENCY_KEY_PATTERN } from '../common/required-header';
import { CreateScheduleDto } from './schedule-request.dto';
import { ScheduleDto } from './schedule-response.dto';

/**
 * One item of a batch. Only the envelope is checked here; `schedule` is checked item by item
 * against CreateScheduleDto, so a bad schedule is that item's 400, not the whole request's.
 */
export class BatchItemDto {
  @ApiProperty({ description: 'as the Idempotency-Key header of POST /schedules', maxLength: 255 })
  @IsString()
  @Matches(IDEMPOTENCY_KEY_PATTERN, {
    message: 'idempotencyKey must be 1-255 printable ASCII characters',
  })
  idempotencyKey: string;

  @ApiProperty({ type: CreateScheduleDto, description: 'the body of POST /schedules' })
  @IsObject()
  schedule: Record<string, unknown>;
}

export class BatchCreateSchedulesDto {
  @ApiProperty({ type: [BatchItemDto], minItems: 1, maxItems: SCHEDULE_LIMITS.maxBatchItems })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(SCHEDULE_LIMITS.maxBatchItems)
  @ArrayUnique((item: { idempotencyKey?: unknown } | null) => item?.idempotencyKey, {
    message: 'each item needs an idempotencyKey of its own',
  })
  @ValidateNested({ each: true })
  @Type(() => BatchItemDto)
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
