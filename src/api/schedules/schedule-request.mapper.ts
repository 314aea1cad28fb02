import { ValidationError } from '../../common';
import type { ScheduleInput, ScheduleEdit } from '../../schedules';
import type {
  CreateScheduleDto,
  ScheduleFieldsDto,
  UpdateScheduleDto,
} from './schedule-request.dto';

export function toScheduleInput(dto: CreateScheduleDto): ScheduleInput {
  return { ...fields(dto), name: dto.name, targetId: dto.targetId };
}

/** Only the fields the client sent: an absent field keeps its value, null clears it. */
export function toScheduleEdit(dto: UpdateScheduleDto): ScheduleEdit {
  const edit: ScheduleEdit = fields(dto);
  if (dto.name !== undefined) edit.name = dto.name;
  if (dto.targetId !== undefined) edit.targetId = dto.targetId;
  if (dto.status !== undefined) edit.status = dto.status;
  return edit;
}

function fields(dto: ScheduleFieldsDto): ScheduleEdit {
  const out: ScheduleEdit = {};
  if (dto.payload !== undefined) out.payload = dto.payload;
  if (dto.runAt !== undefined) out.runAt = date(dto.runAt);
  if (dto.cron !== undefined) out.cron = dto.cron;
  if (dto.timezone !== undefined) out.timezone = dto.timezone;
  if (dto.dstPolicy !== undefined) out.dstPolicy = { ...dto.dstPolicy };
  if (dto.startAt !== undefined) out.startAt = date(dto.startAt);
  if (dto.endAt !== undefined) out.endAt = date(dto.endAt);
  if (dto.missedRunPolicy !== undefined) out.missedRunPolicy = dto.missedRunPolicy;
  if (dto.maxCatchUp !== undefined) out.maxCatchUp = dto.maxCatchUp;
  if (dto.overlapPolicy !== undefined) out.overlapPolicy = dto.overlapPolicy;
  if (dto.retryPolicy !== undefined) out.retryPolicy = { ...dto.retryPolicy };
  if (dto.priority !== undefined) out.priority = dto.priority ?? 'normal';
  if (dto.startDeadlineSeconds !== undefined) out.startDeadlineSeconds = dto.startDeadlineSeconds;
  if (dto.flexibleWindowSeconds !== undefined) {
    out.flexibleWindowSeconds = dto.flexibleWindowSeconds ?? 0;
  }
  return out;
}

function date(value: string | null): Date | null {
  return value === null ? null : new Date(value);
}

/** `If-Match: "3"` (or W/"3", or 3) → 3. */
export function parseRevision(header: string): number {
  const match = /^\s*(?:W\/)?"?(\d{1,9})"?\s*$/.exec(header);
  if (!match) throw new ValidationError('If-Match must carry a schedule revision, e.g. "3"');
  return Number(match[1]);
}

export function etagOf(revision: number): string {
  return `"${revision}"`;
}
