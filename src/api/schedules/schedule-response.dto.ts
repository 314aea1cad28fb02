import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { Occurrence } from '../../recurrence';
import { RUN_PRIORITIES } from '../../run-vocabulary';
import { PAUSE_REASONS, plannedFireAt, type Schedule } from '../../schedules';
import { DstPolicyDto, RetryPolicyDto } from './schedule-request.dto';
import { everyText } from './schedule-request.mapper';

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
  @ApiProperty({
    type: String,
    nullable: true,
    example: '1h30m',
    description: 'interval schedules: canonical d/h/m/s',
  })
  every: string | null;
  @ApiProperty({ type: Number, nullable: true, example: 5400 }) everySeconds: number | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) anchorAt: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { team: 'billing' },
  })
  labels: Record<string, string>;
  @ApiProperty({ type: [String], description: "the schedule's own excluded local dates" })
  excludeDates: string[];
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) calendarId: string | null;
  @ApiProperty({ type: Number, nullable: true }) maxRuns: number | null;
  @ApiProperty({ description: 'runs created to run so far (what maxRuns counts)' })
  runCount: number;
  @ApiProperty({ type: Number, nullable: true }) pauseAfterConsecutiveFailures: number | null;
  @ApiProperty({
    type: Number,
    nullable: true,
    description:
      'a run that starts later than this many seconds after it was due sends run.late (null: never)',
  })
  lateAfterSeconds: number | null;
  @ApiProperty({
    type: String,
    enum: Object.keys(PAUSE_REASONS),
    nullable: true,
    description: 'while paused',
  })
  pausedReason: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'while paused by dueline: why, naming the runs',
  })
  pausedNote: string | null;
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
      timezone: timing.kind === 'once' ? null : timing.timezone,
      dstPolicy: timing.kind === 'cron' ? { ...timing.dstPolicy } : null,
      startAt: schedule.startAt?.toISOString() ?? null,
      endAt: schedule.endAt?.toISOString() ?? null,
      missedRunPolicy: schedule.missedRunPolicy,
      maxCatchUp: schedule.maxCatchUp,
      overlapPolicy: schedule.overlapPolicy,
      retryPolicy: { ...schedule.retryPolicy },
      priority: schedule.priority,
      startDeadlineSeconds: schedule.startDeadlineSeconds,
      every: timing.kind === 'interval' ? everyText(timing.everySeconds) : null,
      everySeconds: timing.kind === 'interval' ? timing.everySeconds : null,
      anchorAt: timing.kind === 'interval' ? timing.anchorAt.toISOString() : null,
      labels: schedule.labels,
      excludeDates: schedule.excludeDates,
      calendarId: schedule.calendarId,
      maxRuns: schedule.maxRuns,
      runCount: schedule.runCount,
      pauseAfterConsecutiveFailures: schedule.pauseAfterConsecutiveFailures,
      lateAfterSeconds: schedule.lateAfterSeconds,
      pausedReason: schedule.pausedReason,
      pausedNote: schedule.pausedNote,
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
