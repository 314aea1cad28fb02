import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsString, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { PAGE_LIMITS } from '../../common';

/** Like @IsOptional, but only for an absent field: `null` is not a way to skip validation. */
export const Absentable = (): PropertyDecorator =>
  ValidateIf((_object, value) => value !== undefined);

/** The one page rule of every list: `limit` within PAGE_LIMITS, an opaque `cursor`. */
export class PageQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: PAGE_LIMITS.max, default: PAGE_LIMITS.default })
  @Absentable()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(PAGE_LIMITS.max)
  limit?: number;

  @ApiPropertyOptional({ description: 'nextCursor from the previous page', maxLength: 200 })
  @Absentable()
  @IsString()
  @MaxLength(200)
  cursor?: string;
}
