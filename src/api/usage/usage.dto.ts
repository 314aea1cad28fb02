import { ApiProperty } from '@nestjs/swagger';
import type { TenantUsage } from '../../usage';
import { TenantQuotasViewDto } from '../tenants/tenant.dto';

export class ProjectedMinuteDto {
  @ApiProperty({ format: 'date-time', description: 'Start of the UTC minute' })
  minute: string;

  @ApiProperty({ example: 1200, description: 'Runs its schedules will need in that minute' })
  runs: number;
}

export class WaitingRunsDto {
  @ApiProperty({ example: 0, description: 'Waiting for a permit of maxConcurrentRuns' })
  throttled_concurrency: number;

  @ApiProperty({ example: 0, description: 'Waiting for a token of dispatchRatePerSecond' })
  throttled_rate: number;

  @ApiProperty({ example: 0, description: 'Waiting for a worker slot (the fleet is saturated)' })
  throttled_fleet: number;
}

export class UsageDto {
  @ApiProperty({ format: 'uuid' })
  tenantId: string;

  @ApiProperty({ type: TenantQuotasViewDto })
  quotas: TenantQuotasViewDto;

  @ApiProperty({ example: 120, description: 'Schedules counting against maxActiveSchedules' })
  activeSchedules: number;

  @ApiProperty({ example: 3, description: 'Runs holding a permit (RUNNING or admitted)' })
  runsHoldingPermits: number;

  @ApiProperty({
    type: WaitingRunsDto,
    description: 'QUEUED runs waiting for admission, by reason',
  })
  waitingRuns: WaitingRunsDto;

  @ApiProperty({ example: 0, description: 'Age of the oldest waiting run past its instant' })
  oldestWaitingSeconds: number;

  @ApiProperty({ example: 6000, description: 'Runs a minute dispatchRatePerSecond allows' })
  allowedRunsPerMinute: number;

  @ApiProperty({
    type: [ProjectedMinuteDto],
    description:
      'The busiest UTC minutes of the next 24 hours as projected from the active schedules ' +
      '(priority low excluded), busiest first; a create or edit that would take a minute past ' +
      'allowedRunsPerMinute is refused with 422',
  })
  busiestMinutes: ProjectedMinuteDto[];

  static from(usage: TenantUsage): UsageDto {
    return {
      ...usage,
      quotas: { ...usage.quotas },
      waitingRuns: { ...usage.waitingRuns },
      busiestMinutes: usage.busiestMinutes.map((m) => ({
        minute: m.minute.toISOString(),
        runs: m.runs,
      })),
    };
  }
}
