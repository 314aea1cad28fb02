import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsInt,
  IsObject,
  ValidateIf,
  IsString,
  Length,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { NoControlCharacters } from '../../common';
import { HISTORY_RETENTION_DAYS, type Tenant } from '../../tenants';

/** Optional but never null: an absent field keeps its value; null is not a value here. */
const OptionalNotNull = () => ValidateIf((_: object, value: unknown) => value !== undefined);

export class TenantQuotasDto {
  @ApiPropertyOptional({ example: 10000, minimum: 0, maximum: 10_000_000 })
  @OptionalNotNull()
  @IsInt()
  @Min(0)
  @Max(10_000_000)
  maxActiveSchedules?: number;

  @ApiPropertyOptional({ example: 100, minimum: 1, maximum: 100_000 })
  @OptionalNotNull()
  @IsInt()
  @Min(1)
  @Max(100_000)
  dispatchRatePerSecond?: number;

  @ApiPropertyOptional({ example: 50, minimum: 1, maximum: 100_000 })
  @OptionalNotNull()
  @IsInt()
  @Min(1)
  @Max(100_000)
  maxConcurrentRuns?: number;

  @ApiPropertyOptional({
    example: 1,
    minimum: 1,
    maximum: 1000,
    description:
      "Fair share: while the workers cannot run everything admitted, the tenants' runs share " +
      'the worker slots in proportion to their weights (default 1)',
  })
  @OptionalNotNull()
  @IsInt()
  @Min(1)
  @Max(1000)
  weight?: number;

  @ApiPropertyOptional({
    example: 7,
    minimum: HISTORY_RETENTION_DAYS.min,
    maximum: HISTORY_RETENTION_DAYS.max,
    description:
      'Days its runs and attempts are kept as rows (default 7); older days live on as daily ' +
      'summaries (GET /schedules/{id}/summary); a service-wide floor may keep them longer',
  })
  @OptionalNotNull()
  @IsInt()
  @Min(HISTORY_RETENTION_DAYS.min)
  @Max(HISTORY_RETENTION_DAYS.max)
  historyRetentionDays?: number;
}

export class CreateTenantDto {
  @ApiProperty({ example: 'acme', minLength: 1, maxLength: 200 })
  @IsString()
  @Length(1, 200)
  @NoControlCharacters()
  name: string;

  @ApiPropertyOptional({ type: TenantQuotasDto })
  @OptionalNotNull()
  @IsObject()
  @ValidateNested()
  @Type(() => TenantQuotasDto)
  quotas?: TenantQuotasDto;
}

export class UpdateTenantDto {
  @ApiPropertyOptional({ example: 'acme', minLength: 1, maxLength: 200 })
  @OptionalNotNull()
  @IsString()
  @Length(1, 200)
  @NoControlCharacters()
  name?: string;

  @ApiPropertyOptional({ type: TenantQuotasDto })
  @OptionalNotNull()
  @IsObject()
  @ValidateNested()
  @Type(() => TenantQuotasDto)
  quotas?: TenantQuotasDto;
}

export class TenantQuotasViewDto {
  @ApiProperty({ example: 10000 })
  maxActiveSchedules: number;

  @ApiProperty({ example: 100 })
  dispatchRatePerSecond: number;

  @ApiProperty({ example: 50 })
  maxConcurrentRuns: number;

  @ApiProperty({ example: 1 })
  weight: number;

  @ApiProperty({ example: 7 })
  historyRetentionDays: number;
}

export class TenantDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'acme' })
  name: string;

  @ApiProperty({ type: TenantQuotasViewDto })
  quotas: TenantQuotasViewDto;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt: string;

  static from(tenant: Tenant): TenantDto {
    return {
      id: tenant.id,
      name: tenant.name,
      quotas: { ...tenant.quotas },
      createdAt: tenant.createdAt.toISOString(),
      updatedAt: tenant.updatedAt.toISOString(),
    };
  }
}

export class CreatedTenantDto extends TenantDto {
  @ApiProperty({
    description: "The tenant's API key. Shown once: store it now; only its hash is kept.",
    example: 'dl_0123456789abcdef_…',
  })
  apiKey: string;
}
