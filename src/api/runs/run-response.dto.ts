import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { Claim } from '../../admission';
import type { Attempt } from '../../attempts';
import type { Run, RunWithAttempts } from '../../occurrences';
import { RUN_TRIGGERS } from '../../occurrences';
import {
  ATTEMPT_OUTCOMES,
  RUN_REASON_CODES,
  RUN_REASONS,
  RUN_PRIORITIES,
  RUN_STATES,
  type RunReason,
} from '../../run-vocabulary';

/** The reason codes with what each means, for the OpenAPI description. */
const REASONS_DESCRIBED = RUN_REASON_CODES.map(
  (code) => `- \`${code}\`: ${RUN_REASONS[code]}`,
).join('\n');

const iso = (date: Date | null): string | null => date?.toISOString() ?? null;

class CoalescedDto {
  @ApiProperty({ description: 'missed instants folded into this run' }) count: number;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) first: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) last: string | null;
}

class RunLinksDto {
  @ApiProperty({ example: '/runs/6f1c…' }) self: string;
  @ApiProperty({ example: '/schedules/2b7e…' }) schedule: string;
  @ApiProperty({
    example: '/schedules/2b7e…/revisions/3',
    description: 'the definition this run ran under',
  })
  revision: string;
}

export class RunDto {
  @ApiProperty({ format: 'uuid', description: 'also the Idempotency-Key of every attempt' })
  id: string;
  @ApiProperty({ format: 'uuid' }) scheduleId: string;
  @ApiProperty({ description: 'the schedule revision this run belongs to' }) revision: number;
  @ApiProperty({ format: 'date-time', description: 'nominal due instant (UTC)' })
  scheduledAt: string;
  @ApiProperty({ example: '2027-01-01T10:00:00+01:00', description: 'local wall time with offset' })
  scheduledLocal: string;
  @ApiProperty({ enum: RUN_STATES }) state: string;
  @ApiProperty({
    type: String,
    enum: RUN_REASON_CODES,
    nullable: true,
    description: `Why it is in this state, as a machine code (null where there is no why):\n${REASONS_DESCRIBED}`,
  })
  reason: RunReason | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'free text beside the reason (an error message)',
  })
  reasonDetail: string | null;
  @ApiProperty({ enum: RUN_TRIGGERS }) trigger: string;
  @ApiProperty({
    format: 'uuid',
    description:
      "what every attempt sends as Idempotency-Key: the run's own id, or for a replay the " +
      "original run's, so a target that deduplicates treats the replay as the same business " +
      'operation (it may answer with its stored result rather than act again)',
  })
  idempotencyKey: string;
  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'the run this one replays',
  })
  replayOf: string | null;
  @ApiProperty() attemptCount: number;
  @ApiProperty() maxAttempts: number;
  @ApiProperty({ description: 'raised by every claim' }) fencingToken: number;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) leaseUntil: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) nextAttemptAt: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) cancelRequestedAt:
    string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) finishedAt: string | null;
  @ApiProperty({ enum: RUN_PRIORITIES }) priority: string;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'past this instant the run is SKIPPED (deadline_exceeded) instead of started',
  })
  startDeadline: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    description:
      "the planned fire instant: scheduledAt (the run's identity), or a deterministic instant " +
      "within the schedule's flexibleWindowSeconds after it; the run never starts before it",
  })
  firesAt: string;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      "for a run waiting for its tenant's budget (throttled_*): when it should start, from its " +
      "place in the tenant's waiting list and the tenant's rate (on GET /runs/{id})",
  })
  estimatedStartAt: string | null;
  @ApiPropertyOptional({ type: CoalescedDto, description: 'present when instants were coalesced' })
  coalesced?: CoalescedDto;
  @ApiProperty({ type: RunLinksDto }) links: RunLinksDto;

  static from(run: Run): RunDto {
    return {
      id: run.id,
      scheduleId: run.scheduleId,
      revision: run.revision,
      scheduledAt: run.scheduledAt.toISOString(),
      scheduledLocal: run.scheduledLocal,
      state: run.state,
      reason: run.reason,
      reasonDetail: run.reasonDetail,
      trigger: run.trigger,
      idempotencyKey: run.idempotencyKey,
      replayOf: run.replayOf,
      attemptCount: run.attemptCount,
      maxAttempts: run.maxAttempts,
      fencingToken: run.fencingToken,
      leaseUntil: iso(run.leaseUntil),
      nextAttemptAt: iso(run.nextAttemptAt),
      cancelRequestedAt: iso(run.cancelRequestedAt),
      createdAt: run.createdAt.toISOString(),
      finishedAt: iso(run.finishedAt),
      priority: run.priority,
      startDeadline: iso(run.startDeadline),
      firesAt: run.firesAt.toISOString(),
      estimatedStartAt: iso(run.estimatedStartAt),
      ...(run.coalesced
        ? {
            coalesced: {
              count: run.coalesced.count,
              first: iso(run.coalesced.first),
              last: iso(run.coalesced.last),
            },
          }
        : {}),
      links: {
        self: `/runs/${run.id}`,
        schedule: `/schedules/${run.scheduleId}`,
        revision: `/schedules/${run.scheduleId}/revisions/${run.revision}`,
      },
    };
  }
}

export class AttemptResponseDto {
  @ApiProperty({ example: 503 }) status: number;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { 'content-type': 'application/json', 'retry-after': '30' },
    description:
      'The allow-listed response headers (ATTEMPT_RESPONSE_HEADERS; location always, cookies never)',
  })
  headers: Record<string, string>;

  @ApiProperty({
    description:
      "The first ATTEMPT_RESPONSE_BODY_BYTES (default 4 KiB) of the body, UTF-8; the call's own credentials are scrubbed",
  })
  bodyExcerpt: string;
}

export class AttemptDto {
  @ApiProperty() attemptNo: number;
  @ApiProperty({ format: 'date-time' }) startedAt: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) endedAt: string | null;
  @ApiProperty() fencingToken: number;
  @ApiProperty({
    type: String,
    enum: ATTEMPT_OUTCOMES,
    nullable: true,
    description: 'null while in flight',
  })
  outcome: string | null;
  @ApiProperty({ type: Number, nullable: true }) httpStatus: number | null;
  @ApiProperty({ type: String, nullable: true }) error: string | null;
  @ApiProperty({ type: Number, nullable: true }) durationMs: number | null;

  @ApiProperty({
    type: AttemptResponseDto,
    nullable: true,
    description:
      'What the target answered; null when it did not answer (or the worker was external)',
  })
  response: AttemptResponseDto | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: '4bf92f3577b34da6a3ce929d0e0e4736',
    description: "The W3C trace id of the attempt's target call (null when tracing is off)",
  })
  traceId: string | null;

  static from(attempt: Attempt): AttemptDto {
    return {
      attemptNo: attempt.attemptNo,
      startedAt: attempt.startedAt.toISOString(),
      endedAt: iso(attempt.endedAt),
      fencingToken: attempt.fencingToken,
      outcome: attempt.outcome,
      httpStatus: attempt.httpStatus,
      error: attempt.error,
      durationMs: attempt.durationMs,
      response: attempt.response
        ? {
            status: attempt.response.status,
            headers: { ...attempt.response.headers },
            bodyExcerpt: attempt.response.bodyExcerpt,
          }
        : null,
      traceId: attempt.traceId,
    };
  }
}

export class RunDetailDto extends RunDto {
  @ApiProperty({
    type: String,
    nullable: true,
    example: '4bf92f3577b34da6a3ce929d0e0e4736',
    description: "The W3C trace id of the run's trace; null when tracing was off",
  })
  traceId: string | null;

  @ApiProperty({ type: [AttemptDto] }) attempts: AttemptDto[];

  static fromDetail(run: RunWithAttempts): RunDetailDto {
    return {
      ...RunDto.from(run),
      traceId: run.traceId,
      attempts: run.attempts.map(AttemptDto.from),
    };
  }
}

export class RunPageDto {
  @ApiProperty({ type: [RunDto] }) items: RunDto[];
  @ApiProperty({ type: String, nullable: true, description: 'pass as ?cursor= for the next page' })
  nextCursor: string | null;
}

export class CancelRunResponseDto extends RunDto {
  @ApiProperty({
    description:
      'true when an attempt was running: it stops at its next heartbeat, but its effect at the ' +
      'target may already have happened',
  })
  inFlight: boolean;
}

export class ClaimResponseDto {
  @ApiProperty({ format: 'uuid' })
  runId: string;
  @ApiProperty({
    format: 'uuid',
    description:
      "send it to the target as Idempotency-Key: the run id, or for a replay the original run's",
  })
  idempotencyKey: string;
  @ApiProperty({ description: 'send it with every heartbeat and the completion' })
  fencingToken: number;
  @ApiProperty({ format: 'date-time' }) leaseUntil: string;
  @ApiProperty({ description: '1-based attempt number' }) attempt: number;
  @ApiProperty({ type: 'object', additionalProperties: true, example: { report: 'daily' } })
  payload: Record<string, unknown>;
  @ApiProperty({ format: 'uuid' }) scheduleId: string;
  @ApiProperty({ format: 'date-time' }) scheduledAt: string;

  static from(claim: Claim): ClaimResponseDto {
    return {
      runId: claim.runId,
      idempotencyKey: claim.idempotencyKey,
      fencingToken: claim.fencingToken,
      leaseUntil: claim.leaseUntil.toISOString(),
      attempt: claim.attempt,
      payload: claim.payload,
      scheduleId: claim.scheduleId,
      scheduledAt: claim.scheduledAt.toISOString(),
    };
  }
}

export class HeartbeatResponseDto {
  @ApiProperty({ format: 'uuid' }) runId: string;
  @ApiProperty() fencingToken: number;
  @ApiProperty({ format: 'date-time' }) leaseUntil: string;
  @ApiProperty({ description: 'stop the attempt and complete it with outcome "cancelled"' })
  cancelRequested: boolean;
}

export class CompleteResponseDto {
  @ApiProperty({ format: 'uuid' }) runId: string;
  @ApiProperty({ enum: RUN_STATES }) state: string;
  @ApiProperty({ enum: RUN_REASON_CODES, nullable: true }) reason: RunReason | null;
  @ApiProperty({ type: String, nullable: true }) reasonDetail: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) nextAttemptAt: string | null;
}
