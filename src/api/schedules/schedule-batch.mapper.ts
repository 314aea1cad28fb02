import { DomainError, problemOf, StrictValidationPipe } from '../../common';
import type { Actor, CreateOutcome, CreateRequest } from '../../schedules';
import type { BatchCreateSchedulesDto, BatchItemResultDto } from './schedule-batch.dto';
import { CreateScheduleDto } from './schedule-request.dto';
import { toScheduleInput } from './schedule-request.mapper';
import { ScheduleDto } from './schedule-response.dto';

/** The very rules of POST /schedules's body, applied to one item at a time. */
const itemValidation = new StrictValidationPipe();

/** Each item as a create request, or the refusal of its schedule by the DTO rules. */
export async function toCreateRequests(
  body: BatchCreateSchedulesDto,
  rawItems: ReadonlyArray<{ schedule: unknown }>,
  actor: Actor,
): Promise<Array<CreateRequest | DomainError>> {
  return Promise.all(
    body.items.map(async (item, i) => {
      try {
        const dto = (await itemValidation.transform(item.schedule, {
          type: 'body',
          metatype: CreateScheduleDto,
        })) as CreateScheduleDto;
        // The body as sent is what an Idempotency-Key replay is compared with, as for one create.
        const requestBody = rawItems[i].schedule;
        return {
          idempotencyKey: item.idempotencyKey,
          requestBody,
          input: toScheduleInput(dto),
          actor,
        };
      } catch (error) {
        if (error instanceof DomainError) return error;
        throw error;
      }
    }),
  );
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
