import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { BulkOperationsService, type BulkKind } from '../../bulk-operations';
import { ApiProblems, decodeCursor, encodeCursor } from '../../common';
import { OccurrencesService } from '../../occurrences';
import type { Actor } from '../../schedules';
import type { Tenant } from '../../tenants';
import { CurrentActor, CurrentTenant } from '../auth/current-tenant.decorator';
import { PageQueryDto } from '../common/page-query.dto';
import { ResourceIdPipe } from '../common/resource-id.pipe';
import { RunDto, RunPageDto } from './run-response.dto';
import {
  BulkItemDto,
  BulkItemPageDto,
  BulkOperationDto,
  BulkRunsDto,
  SearchRunsQueryDto,
  toBulkSelection,
  toRunFilter,
} from './run-search.dto';

const BULK_DESCRIPTION =
  'Takes the runs matching `filter` (or the given `ids`), at most `limit` (1-1000, default 100), ' +
  'oldest scheduledAt first, and answers 202 with the operation; its progress is at ' +
  'GET /bulk-operations/{id}, what became of each run at /items.';

@ApiTags('runs')
@ApiBearerAuth()
@ApiProblems(400, 401, 429)
@Controller()
export class RunSearchController {
  constructor(
    private readonly runs: OccurrencesService,
    private readonly bulk: BulkOperationsService,
  ) {}

  @Get('runs')
  @ApiOperation({
    summary: "Search the tenant's runs (every filter given applies; oldest scheduledAt first)",
  })
  @ApiOkResponse({ type: RunPageDto })
  async search(
    @CurrentTenant() tenant: Tenant,
    @Query() query: SearchRunsQueryDto,
  ): Promise<RunPageDto> {
    const page = await this.runs.search(tenant.id, toRunFilter(query), {
      limit: query.limit,
      afterId: decodeCursor(query.cursor),
    });
    return { items: page.items.map(RunDto.from), nextCursor: encodeCursor(page.nextAfterId) };
  }

  @Post('runs/replay')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Replay FAILED and UNKNOWN runs (bulk)',
    description:
      BULK_DESCRIPTION +
      ' A replay is a new run (trigger `replay`, `replayOf` the original) for the same ' +
      "scheduledAt under the schedule's current revision, admitted like any run. It keeps the " +
      "original's `idempotencyKey`: every attempt sends it as Idempotency-Key, so a target that " +
      'deduplicates treats the replay as the same business operation (and may answer with its ' +
      'stored result instead of acting twice). A run is replayed once; replay a failed replay ' +
      'to try again. Runs in other states are skipped (`not_replayable`).',
  })
  @ApiAcceptedResponse({ type: BulkOperationDto })
  replay(
    @CurrentTenant() tenant: Tenant,
    @CurrentActor() actor: Actor,
    @Body() body: BulkRunsDto,
  ): Promise<BulkOperationDto> {
    return this.start(tenant, actor, 'replay', body);
  }

  @Post('runs/cancel')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Cancel runs (bulk)',
    description:
      BULK_DESCRIPTION +
      ' A waiting run ends CANCELLED; a RUNNING one is asked to stop at its next heartbeat ' +
      '(its attempt may already have acted); a finished one is skipped (`already_final`).',
  })
  @ApiAcceptedResponse({ type: BulkOperationDto })
  cancel(
    @CurrentTenant() tenant: Tenant,
    @CurrentActor() actor: Actor,
    @Body() body: BulkRunsDto,
  ): Promise<BulkOperationDto> {
    return this.start(tenant, actor, 'cancel', body);
  }

  @Get('bulk-operations/:id')
  @ApiOperation({ summary: 'A bulk operation and its progress' })
  @ApiOkResponse({ type: BulkOperationDto })
  @ApiProblems(404)
  async get(
    @CurrentTenant() tenant: Tenant,
    @Param('id', new ResourceIdPipe('bulk operation')) id: string,
  ): Promise<BulkOperationDto> {
    return BulkOperationDto.from(await this.bulk.get(tenant.id, id));
  }

  @Get('bulk-operations/:id/items')
  @ApiOperation({ summary: 'What became of each selected run, in selection order' })
  @ApiOkResponse({ type: BulkItemPageDto })
  @ApiProblems(404)
  async items(
    @CurrentTenant() tenant: Tenant,
    @Param('id', new ResourceIdPipe('bulk operation')) id: string,
    @Query() query: PageQueryDto,
  ): Promise<BulkItemPageDto> {
    const page = await this.bulk.items(tenant.id, id, {
      limit: query.limit,
      afterId: decodeCursor(query.cursor),
    });
    return { items: page.items.map(BulkItemDto.from), nextCursor: encodeCursor(page.nextAfterId) };
  }

  private async start(
    tenant: Tenant,
    actor: Actor,
    kind: BulkKind,
    body: BulkRunsDto,
  ): Promise<BulkOperationDto> {
    const operation = await this.bulk.create(tenant.id, {
      kind,
      ...toBulkSelection(body),
      apiKeyId: actor.apiKeyId!,
    });
    return BulkOperationDto.from(operation);
  }
}
