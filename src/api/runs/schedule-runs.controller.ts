import { Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiProblems, decodeCursor, encodeCursor, RESPONSE_HEADERS } from '../../common';
import { OccurrencesService } from '../../occurrences';
import { SchedulesService } from '../../schedules';
import type { Tenant } from '../../tenants';
import { CurrentTenant } from '../auth/current-tenant.decorator';
import { ResourceIdPipe } from '../common/resource-id.pipe';
import { ListRunsQueryDto } from './run-request.dto';
import { RunDto, RunPageDto } from './run-response.dto';

const scheduleId = new ResourceIdPipe('schedule');

/** A schedule's runs: its history, and a manual run now. */
@ApiTags('runs')
@ApiBearerAuth()
@ApiProblems(401, 404, 429)
@ApiParam({ name: 'id', format: 'uuid', description: 'schedule id' })
@Controller('schedules')
export class ScheduleRunsController {
  constructor(
    private readonly runs: OccurrencesService,
    private readonly schedules: SchedulesService,
  ) {}

  @Get(':id/runs')
  @ApiOperation({
    summary:
      "A schedule's runs by scheduled instant, then revision and origin (a replay's, a " +
      "backfill's); every state distinct",
  })
  @ApiOkResponse({ type: RunPageDto })
  @ApiProblems(400)
  async list(
    @CurrentTenant() tenant: Tenant,
    @Param('id', scheduleId) id: string,
    @Query() query: ListRunsQueryDto,
  ): Promise<RunPageDto> {
    const page = await this.runs.list(tenant.id, id, {
      state: query.state,
      limit: query.limit,
      afterId: decodeCursor(query.cursor),
    });
    return { items: page.items.map(RunDto.from), nextCursor: encodeCursor(page.nextAfterId) };
  }

  @Post(':id/trigger')
  @ApiOperation({ summary: 'One manual run now (due at once, by the database clock)' })
  @ApiCreatedResponse({ type: RunDto, headers: { Location: RESPONSE_HEADERS.Location } })
  @ApiProblems(409)
  async trigger(
    @CurrentTenant() tenant: Tenant,
    @Param('id', scheduleId) id: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<RunDto> {
    const run = await this.schedules.trigger(tenant.id, id);
    res.status(201).location(`/runs/${run.id}`);
    return RunDto.from(run);
  }
}
