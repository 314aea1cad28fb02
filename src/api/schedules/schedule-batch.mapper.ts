import { DomainError, problemOf, validateJsonObject } from '../../common';
import type { Actor, CreateOutcome, CreateRequest } from '../../schedules';
import type { BatchItem } from './batch-envelope';
import type { BatchItemResultDto } from './schedule-batch.dto';
import { CreateScheduleDto } from './schedule-request.dto';
import { toScheduleInput } from './schedule-request.mapper';
import { ScheduleDto } from './schedule-response.dto';

/**
 * Each item as a create request, or the refusal of its schedule by the very rules of POST
 * /schedules's body.
 */
export function toCreateRequests(
  items: readonly BatchItem[],
  actor: Actor,
): Array<CreateRequest | DomainError> {
  return items.map((item) => {
    try {
      const dto = validateJsonObject(CreateScheduleDto, item.schedule);
      return {
        idempotencyKey: item.idempotencyKey,
        // The body as sent is what an Idempotency-Key replay is compared with, as for one create.
        requestBody: item.schedule,
        input: toScheduleInput(dto),
        actor,
      };
    } catch (error) {
      if (error instanceof DomainError) return error;
      throw error;
    }
  });
}

/** The answer of each item in request order: refusals of the DTO rules, then the service's. */
export function toBatchResult(
  requests: ReadonlyArray<CreateRequest | DomainError>,
  outcomes: readonly CreateOutcome[],
): BatchItemResultDto[] {
  let next = 0;
  return requests.map((request) => {
    const outcome: CreateOutcome =
      request instanceof DomainError ? { error: request } : outcomes[next++];
    if (outcome.error) {
      const problem = problemOf(outcome.error);
      return { status: problem.status, problem };
    }
    return { status: 201, schedule: ScheduleDto.from(outcome.schedule) };
  });
}
