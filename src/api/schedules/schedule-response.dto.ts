import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { Occurrence } from '../../recurrence';
import { RUN_PRIORITIES } from '../../run-vocabulary';
import { plannedFireAt, type Schedule } from '../../schedules';
import { DstPolicyDto, RetryPolicyDto } from './schedule-request.dto';

class ScheduleLinksDto {
  @ApiProperty({ example: '/schedules/6f1c…' })
  self: string;

  @ApiProperty({ example: '/schedules/6f1c…/runs' })
  runs: string;

  @ApiProperty({
    example: '/targets/0b7e…',
    description:
      "Its target, whose status (and disabledReason) says why the schedule's runs end FAILED " +
      'target_gone, and whose backoffUntil says why they wait target_backoff',
  })
  target: string;
}

export class ScheduleDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'nightly-report' }) name: string;
  @ApiProperty({ format: 'uuid' }) targetId: string;
  @ApiProperty({ type: 'object', additionalProperties: true, example: { report: 'daily' } })
  payload: Record<string, unknown>;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) runAt: string | null;
  @ApiProperty({ type: String, nullable: true, example: '0 9 * * *' }) cron: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'Europe/Berlin' }) timezone: string | null;
  @ApiPropertyOptional({ type: DstPolicyDto, nullable: true }) dstPolicy: DstPolicyDto | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) startAt: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) endAt: string | null;
  @ApiProperty({ enum: ['latest', 'skip', 'all'] }) missedRunPolicy: string;
  @ApiProperty() maxCatchUp: number;
  @ApiProperty({ enum: ['skip', 'buffer_one', 'allow'] }) overlapPolicy: string;
  @ApiProperty({ type: RetryPolicyDto }) retryPolicy: RetryPolicyDto;
  @ApiProperty({ enum: RUN_PRIORITIES }) priority: string;
  @ApiProperty({ type: Number, nullable: true }) startDeadlineSeconds: number | null;
  @ApiProperty({ example: 0 }) flexibleWindowSeconds: number;
  @ApiProperty({ example: 1, description: 'bumped by every edit; send it back as If-Match' })
  revision: number;
  @ApiProperty({ enum: ['active', 'paused', 'cancelled', 'completed'] }) status: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) nextDueAt: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: "the next run's planned fire instant (nextDueAt without a flexible window)",
  })
  nextFiresAt: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiProperty({ type: ScheduleLinksDto }) links: ScheduleLinksDto;

  static from(schedule: Schedule): ScheduleDto {
    const { timing } = schedule;
    return {
      id: schedule.id,
      name: schedule.name,
      targetId: schedule.targetId,
      payload: schedule.payload,
      runAt: timing.kind === 'once' ? timing.runAt.toISOString() : null,
      cron: timing.kind === 'cron' ? timing.cron : null,
      timezone: timing.kind === 'cron' ? timing.timezone : null,
      dstPolicy: timing.kind === 'cron' ? { ...timing.dstPolicy } : null,
      startAt: schedule.startAt?.toISOString() ?? null,
      endAt: schedule.endAt?.toISOString() ?? null,
      missedRunPolicy: schedule.missedRunPolicy,
      maxCatchUp: schedule.maxCatchUp,
      overlapPolicy: schedule.overlapPolicy,
      retryPolicy: { ...schedule.retryPolicy },
      priority: schedule.priority,
      startDeadlineSeconds: schedule.startDeadlineSeconds,
      flexibleWindowSeconds: schedule.flexibleWindowSeconds,
      revision: schedule.revision,
      status: schedule.status,
      nextDueAt: schedule.nextDueAt?.toISOString() ?? null,
      nextFiresAt: schedule.nextDueAt
        ? plannedFireAt(
            schedule.id,
            schedule.nextDueAt,
            schedule.flexibleWindowSeconds,
          ).toISOString()
        : null,
      createdAt: schedule.createdAt.toISOString(),
      updatedAt: schedule.updatedAt.toISOString(),
      links: {
        self: `/schedules/${schedule.id}`,
        runs: `/schedules/${schedule.id}/runs`,
        target: `/targets/${schedule.targetId}`,
      },
    };
  }
}

export class SchedulePageDto {
  @ApiProperty({ type: [ScheduleDto] }) items: ScheduleDto[];
  @ApiProperty({ type: String, nullable: true, description: 'pass as ?cursor= for the next page' })
  nextCursor: string | null;
}

export class PreviewInstantDto {
  @ApiProperty({ format: 'date-time', example: '2027-11-07T05:30:00.000Z' }) at: string;
  @ApiProperty({ example: '2027-11-07T01:30:00-04:00', description: 'local wall time with offset' })
  local: string;
  @ApiPropertyOptional({
    format: 'date-time',
    description:
      "a schedule's own preview: the planned fire instant within its flexible window (at, " +
      'without one); it depends on the schedule id, so a preview before the create has none',
  })
  firesAt?: string;

  static from(occurrence: Occurrence & { firesAt?: Date }): PreviewInstantDto {
    return {
      at: occurrence.at.toISOString(),
      local: occurrence.local,
      ...(occurrence.firesAt ? { firesAt: occurrence.firesAt.toISOString() } : {}),
    };
  }
}

export class PreviewDto {
  @ApiProperty({ type: [PreviewInstantDto] }) items: PreviewInstantDto[];
}
