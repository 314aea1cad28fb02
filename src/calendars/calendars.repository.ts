import { Injectable } from '@nestjs/common';
import { SqlRunner, type Tx } from '../database';
import type { Calendar } from './calendar';
import { CalendarEntity } from './calendar.entity';
import { INSERT_CALENDAR } from './calendars.sql';

@Injectable()
export class CalendarsRepository {
  constructor(private readonly sql: SqlRunner) {}

  /** The new calendar, or null when the tenant already has one of that name. */
  async insert(tenantId: string, name: string, dates: readonly string[]): Promise<Calendar | null> {
    const [row] = await this.sql.rows(INSERT_CALENDAR, [tenantId, name, JSON.stringify(dates)]);
    if (!row) return null;
    return {
      id: row.id as string,
      tenantId: row.tenant_id as string,
      name: row.name as string,
      dates: row.dates as string[],
      createdAt: row.created_at as Date,
    };
  }

  async findByIds(tenantId: string, ids: readonly string[], tx?: Tx): Promise<Calendar[]> {
    if (ids.length === 0) return [];
    const rows = await this.sql
      .manager(tx)
      .getRepository(CalendarEntity)
      .createQueryBuilder('c')
      .where('c.tenant_id = :tenantId AND c.id IN (:...ids)', { tenantId, ids })
      .getMany();
    return rows.map(toCalendar);
  }

  /** Keyset pagination by (created_at, id), as every list. */
  async list(tenantId: string, limit: number, afterId: string | null): Promise<Calendar[]> {
    const query = this.sql
      .manager()
      .getRepository(CalendarEntity)
      .createQueryBuilder('c')
      .where('c.tenant_id = :tenantId', { tenantId })
      .orderBy('c.created_at', 'ASC')
      .addOrderBy('c.id', 'ASC')
      .limit(limit);
    if (afterId) {
      query.andWhere(
        '(c.created_at, c.id) > (SELECT p.created_at, p.id FROM calendars p WHERE p.tenant_id = :tenantId AND p.id = :afterId)',
        { afterId },
      );
    }
    return (await query.getMany()).map(toCalendar);
  }
}

function toCalendar(row: CalendarEntity): Calendar {
  return {
    id: row.id,
    tenantId: row.tenantId,
    name: row.name,
    dates: row.dates,
    createdAt: row.createdAt,
  };
}
