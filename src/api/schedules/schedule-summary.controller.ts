import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiProblems } from '../../common';
import { RunSummariesService } from '../../run-summaries';
import type { Tenant } from '../../tenants';
import { CurrentTenant } from '../auth/current-tenant.decorator';
import { ResourceIdPipe } from '../common/resource-id.pipe';
import { ScheduleSummaryDto, ScheduleSummaryQueryDto, summaryBounds } from './schedule-summary.dto';

/** How a schedule did, day by day, also for days whose runs are no longer kept as rows. */
@ApiTags('schedules')
@ApiBearerAuth()
@ApiProblems(400, 401, 404, 429)
@ApiParam({ name: 'id', format: 'uuid', description: 'schedule id' })
@Controller('schedules')
export class ScheduleSummaryController {
  constructor(private readonly summaries: RunSummariesService) {}

  @Get(':id/summary')
  @ApiOperation({
    summary:
      "A schedule's runs per UTC day: counts by state and reason, attempts, lag p50/p99/max " +
      '(from summaries and kept rows together)',
  })
  @ApiOkResponse({ type: ScheduleSummaryDto })
  async get(
    @CurrentTenant() tenant: Tenant,
    @Param('id', new ResourceIdPipe('schedule')) id: string,
    @Query() query: ScheduleSummaryQueryDto,
  ): Promise<ScheduleSummaryDto> {
    return ScheduleSummaryDto.from(
      await this.summaries.summary(tenant.id, id, summaryBounds(query)),
    );
  }
}
