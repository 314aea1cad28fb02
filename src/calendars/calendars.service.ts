import { Injectable } from '@nestjs/common';
import { ConflictError, isUuid, NotFoundError, pageSize, ValidationError } from '../common';
import type { Tx } from '../database';
import { isLocalDate } from '../recurrence';
import type { Calendar, CalendarPage } from './calendar';
import { CalendarsRepository } from './calendars.repository';

/** The most dates one calendar holds (the same bound as a schedule's own excludeDates). */
export const MAX_CALENDAR_DATES = 1000;

@Injectable()
export class CalendarsService {
  constructor(private readonly calendars: CalendarsRepository) {}

  async create(tenantId: string, name: string, dates: readonly string[]): Promise<Calendar> {
    if (dates.length > MAX_CALENDAR_DATES) {
      throw new ValidationError('the calendar is invalid', [
        { field: 'dates', message: `at most ${MAX_CALENDAR_DATES} dates` },
      ]);
    }
    const invalid = dates.find((date) => !isLocalDate(date));
    if (invalid !== undefined) {
      throw new ValidationError('the calendar is invalid', [
        {
          field: 'dates',
          message: `"${String(invalid).slice(0, 40)}" is not a local date (YYYY-MM-DD)`,
        },
      ]);
    }
    const calendar = await this.calendars.insert(tenantId, name, [...new Set(dates)].sort());
    if (!calendar) throw new ConflictError(`a calendar named "${name}" already exists`);
    return calendar;
  }

  async get(tenantId: string, id: string): Promise<Calendar> {
    const [calendar] = isUuid(id) ? await this.calendars.findByIds(tenantId, [id]) : [];
    if (!calendar) throw new NotFoundError('calendar', id);
    return calendar;
  }

  async list(tenantId: string, page: { limit?: number; afterId?: string }): Promise<CalendarPage> {
    const limit = pageSize(page.limit);
    const rows = await this.calendars.list(tenantId, limit + 1, page.afterId ?? null);
    const items = rows.slice(0, limit);
    return { items, nextAfterId: rows.length > limit ? items[items.length - 1].id : null };
  }

  /** The dates of the tenant's calendars by id; an id that is not the tenant's is absent. */
  async datesOf(tenantId: string, ids: readonly string[], tx?: Tx): Promise<Map<string, string[]>> {
    const known = [...new Set(ids)].filter(isUuid);
    const calendars = await this.calendars.findByIds(tenantId, known, tx);
    return new Map(calendars.map((c) => [c.id, c.dates]));
  }
}
