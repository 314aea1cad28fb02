import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CalendarsService } from '../../calendars';
import { ApiProblems, decodeCursor, encodeCursor } from '../../common';
import type { Tenant } from '../../tenants';
import { CurrentTenant } from '../auth/current-tenant.decorator';
import { ResourceIdPipe } from '../common/resource-id.pipe';
import {
  CalendarDto,
  CalendarPageDto,
  CreateCalendarDto,
  ListCalendarsQueryDto,
} from './calendar.dto';

@ApiTags('calendars')
@ApiBearerAuth()
@ApiProblems(401, 429)
@Controller('calendars')
export class CalendarsController {
  constructor(private readonly calendars: CalendarsService) {}

  @Post()
  @ApiOperation({
    summary: 'Create a named calendar of excluded local dates (schedules name it as calendarId)',
    description:
      'A calendar never changes once created, so a schedule always runs against the dates it ' +
      'was written with; for another list create another calendar and PATCH the schedules.',
  })
  @ApiCreatedResponse({ type: CalendarDto })
  @ApiProblems(400, 409)
  async create(
    @CurrentTenant() tenant: Tenant,
    @Body() body: CreateCalendarDto,
  ): Promise<CalendarDto> {
    return CalendarDto.from(await this.calendars.create(tenant.id, body.name, body.dates));
  }

  @Get()
  @ApiOperation({ summary: "List the tenant's calendars, oldest first" })
  @ApiOkResponse({ type: CalendarPageDto })
  @ApiProblems(400)
  async list(
    @CurrentTenant() tenant: Tenant,
    @Query() query: ListCalendarsQueryDto,
  ): Promise<CalendarPageDto> {
    const page = await this.calendars.list(tenant.id, {
      limit: query.limit,
      afterId: decodeCursor(query.cursor),
    });
    return { items: page.items.map(CalendarDto.from), nextCursor: encodeCursor(page.nextAfterId) };
  }

  @Get(':id')
  @ApiOperation({ summary: 'Read a calendar' })
  @ApiOkResponse({ type: CalendarDto })
  @ApiProblems(404)
  async get(
    @CurrentTenant() tenant: Tenant,
    @Param('id', new ResourceIdPipe('calendar')) id: string,
  ): Promise<CalendarDto> {
    return CalendarDto.from(await this.calendars.get(tenant.id, id));
  }
}
