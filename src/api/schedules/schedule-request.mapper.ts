import { ValidationError } from '../../common';
import type { ScheduleInput, ScheduleEdit } from '../../schedules';
import type {
  CreateScheduleDto,
  ScheduleFieldsDto,
  UpdateScheduleDto,
} from './schedule-request.dto';
import { EVERY_PATTERN } from './schedule-request.dto';

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
  if (dto.every !== undefined) out.every = dto.every === null ? null : everySeconds(dto.every);
  if (dto.anchorAt !== undefined) out.anchorAt = date(dto.anchorAt);
  if (dto.labels !== undefined) out.labels = dto.labels;
  if (dto.excludeDates !== undefined) out.excludeDates = dto.excludeDates;
  if (dto.calendarId !== undefined) out.calendarId = dto.calendarId;
  if (dto.maxRuns !== undefined) out.maxRuns = dto.maxRuns;
  if (dto.lateAfterSeconds !== undefined) out.lateAfterSeconds = dto.lateAfterSeconds;
  if (dto.pauseAfterConsecutiveFailures !== undefined) {
    out.pauseAfterConsecutiveFailures = dto.pauseAfterConsecutiveFailures;
  }
  if (dto.flexibleWindowSeconds !== undefined) {
    out.flexibleWindowSeconds = dto.flexibleWindowSeconds ?? 0;
  }
  return out;
}

/** `1h30m` → 5400 (the DTO checked the shape; the definition checks the bounds). */
export function everySeconds(text: string): number {
  const [, d, h, m, s] = EVERY_PATTERN.exec(text) ?? [];
  if (text === '' || (d ?? h ?? m ?? s) === undefined) {
    throw new ValidationError('the schedule is invalid', [
      { field: 'every', message: 'every must be a duration such as 90m, 1h30m, 45s or 2d' },
    ]);
  }
  return Number(d ?? 0) * 86_400 + Number(h ?? 0) * 3600 + Number(m ?? 0) * 60 + Number(s ?? 0);
}

/** 5400 → `1h30m`: the canonical spelling a schedule answers with. */
export function everyText(seconds: number): string {
  const parts: string[] = [];
  let left = seconds;
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    const n = Math.floor(left / size);
    if (n > 0) parts.push(`${n}${unit}`);
    left -= n * size;
  }
  return parts.join('') || '0s';
}

/** `team:billing` → { team: 'billing' }; every label given must match. */
export function labelFilter(labels: readonly string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const label of labels ?? []) {
    const colon = label.indexOf(':');
    out[label.slice(0, colon)] = label.slice(colon + 1);
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
