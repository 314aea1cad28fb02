import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Param,
  Patch,
  Post,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiCreatedResponse,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import {
  ApiProblems,
  BATCH_BODY_LIMIT,
  decodeCursor,
  DomainError,
  encodeCursor,
  RESPONSE_HEADERS,
} from '../../common';
import { type Actor, type CreateRequest, SchedulesService } from '../../schedules';
import type { Tenant } from '../../tenants';
import { CurrentActor, CurrentTenant } from '../auth/current-tenant.decorator';
import { PageQueryDto } from '../common/page-query.dto';
import { requireIdempotencyKey, requireIfMatch } from '../common/required-header';
import { ResourceIdPipe } from '../common/resource-id.pipe';
import { BatchCreateSchedulesDto, BatchResultDto } from './schedule-batch.dto';
import { RevisionDto, RevisionPageDto, revisionNumberOf } from './schedule-revision.dto';
import { readBatchEnvelope } from './batch-envelope';
import { toBatchResult, toCreateRequests } from './schedule-batch.mapper';
import {
  CreateScheduleDto,
  ListSchedulesQueryDto,
  PreviewQueryDto,
  PreviewRequestDto,
  UpdateScheduleDto,
} from './schedule-request.dto';
import {
  etagOf,
  everySeconds,
  labelFilter,
  parseRevision,
  toScheduleEdit,
  toScheduleInput,
} from './schedule-request.mapper';
import {
  PreviewDto,
  PreviewInstantDto,
  ScheduleDto,
  SchedulePageDto,
} from './schedule-response.dto';

const scheduleId = new ResourceIdPipe('schedule');

@ApiTags('schedules')
@ApiBearerAuth()
@ApiProblems(400, 401, 429)
@Controller('schedules')
export class SchedulesController {
  constructor(private readonly schedules: SchedulesService) {}

  @Post()
  @ApiOperation({ summary: 'Create a schedule (201 only once it is durable)' })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: true,
    description: 'replays the first answer for the same body',
  })
  @ApiCreatedResponse({
    type: ScheduleDto,
    headers: { Location: RESPONSE_HEADERS.Location, ETag: RESPONSE_HEADERS.ETag },
  })
  @ApiProblems(403, 404, 413, 422)
  async create(
    @CurrentTenant() tenant: Tenant,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Req() req: Request,
    @Body() body: CreateScheduleDto,
    @Res({ passthrough: true }) res: Response,
    @CurrentActor() actor: Actor,
  ): Promise<ScheduleDto> {
    const key = requireIdempotencyKey(idempotencyKey);
    const { schedule, created } = await this.schedules.create(
      tenant,
      key,
      req.body,
      toScheduleInput(body),
      actor,
    );
    res
      .status(201)
      .location(`/schedules/${schedule.id}`)
      .setHeader('ETag', etagOf(schedule.revision));
    if (!created) res.setHeader('Idempotent-Replayed', 'true');
    return ScheduleDto.from(schedule);
  }

  @Post('batch')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Create up to 1,000 schedules, each atomic on its own, with its own Idempotency-Key',
    description:
      'Each item answers as POST /schedules would (201 with the schedule, or a 4xx problem), in ' +
      `request order. The body may be up to ${BATCH_BODY_LIMIT}.`,
  })
  @ApiBody({ type: BatchCreateSchedulesDto })
  @ApiOkResponse({ type: BatchResultDto })
  @ApiProblems(413)
  async createBatch(
    @CurrentTenant() tenant: Tenant,
    // Unknown to the global pipe (its type is not a DTO): readBatchEnvelope checks it.
    @Body() body: unknown,
    @CurrentActor() actor: Actor,
  ): Promise<BatchResultDto> {
    const requests = toCreateRequests(readBatchEnvelope(body), actor);
    const valid = requests.filter((r): r is CreateRequest => !(r instanceof DomainError));
    const outcomes = await this.schedules.createBatch(tenant, valid);
    return { items: toBatchResult(requests, outcomes) };
  }

  @Get()
  @ApiOperation({ summary: 'List schedules (cursor pagination, oldest first)' })
  @ApiOkResponse({ type: SchedulePageDto })
  async list(
    @CurrentTenant() tenant: Tenant,
    @Query() query: ListSchedulesQueryDto,
  ): Promise<SchedulePageDto> {
    const page = await this.schedules.list(tenant.id, {
      status: query.status,
      labels: labelFilter(query.label),
      limit: query.limit,
      afterId: decodeCursor(query.cursor),
    });
    return { items: page.items.map(ScheduleDto.from), nextCursor: encodeCursor(page.nextAfterId) };
  }

  @Post('preview')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Preview the next instants of a cron or interval recurrence',
    description:
      'DST policy, excluded dates (or a calendar), bounds and maxRuns applied, exactly as a ' +
      'schedule with these fields would run.',
  })
  @ApiOkResponse({ type: PreviewDto })
  @ApiProblems(404)
  async preview(
    @CurrentTenant() tenant: Tenant,
    @Body() body: PreviewRequestDto,
  ): Promise<PreviewDto> {
    const items = await this.schedules.preview(tenant.id, {
      cron: body.cron ?? null,
      every: body.every == null ? null : everySeconds(body.every),
      anchorAt: body.anchorAt ? new Date(body.anchorAt) : null,
      excludeDates: body.excludeDates ?? null,
      calendarId: body.calendarId ?? null,
      maxRuns: body.maxRuns ?? null,
      timezone: body.timezone,
      dstPolicy: body.dstPolicy,
      from: body.from ? new Date(body.from) : undefined,
      count: body.count ?? 10,
      startAt: body.startAt ? new Date(body.startAt) : null,
      endAt: body.endAt ? new Date(body.endAt) : null,
    });
    return { items: items.map(PreviewInstantDto.from) };
  }

  @Get(':id')
  @ApiOperation({ summary: 'Read a schedule; ETag carries its revision' })
  @ApiOkResponse({ type: ScheduleDto, headers: { ETag: RESPONSE_HEADERS.ETag } })
  @ApiProblems(404)
  async get(
    @CurrentTenant() tenant: Tenant,
    @Param('id', scheduleId) id: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ScheduleDto> {
    const schedule = await this.schedules.get(tenant.id, id);
    res.setHeader('ETag', etagOf(schedule.revision));
    return ScheduleDto.from(schedule);
  }

  @Get(':id/preview')
  @ApiOperation({ summary: 'The next N instants of this schedule' })
  @ApiOkResponse({ type: PreviewDto })
  @ApiProblems(404)
  async previewSchedule(
    @CurrentTenant() tenant: Tenant,
    @Param('id', scheduleId) id: string,
    @Query() query: PreviewQueryDto,
  ): Promise<PreviewDto> {
    const items = await this.schedules.previewSchedule(tenant.id, id, query.count ?? 10);
    return { items: items.map(PreviewInstantDto.from) };
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Edit, pause (status: paused), resume (active) or cancel; needs If-Match',
  })
  @ApiHeader({ name: 'If-Match', required: true, description: 'the revision you read, e.g. "3"' })
  @ApiOkResponse({ type: ScheduleDto, headers: { ETag: RESPONSE_HEADERS.ETag } })
  @ApiProblems(404, 409, 413, 428)
  async update(
    @CurrentTenant() tenant: Tenant,
    @Param('id', scheduleId) id: string,
    @Headers('if-match') ifMatch: string | undefined,
    @Body() body: UpdateScheduleDto,
    @Res({ passthrough: true }) res: Response,
    @CurrentActor() actor: Actor,
  ): Promise<ScheduleDto> {
    const revision = parseRevision(requireIfMatch(ifMatch));
    const schedule = await this.schedules.update(
      tenant.id,
      id,
      revision,
      toScheduleEdit(body),
      actor,
    );
    res.setHeader('ETag', etagOf(schedule.revision));
    return ScheduleDto.from(schedule);
  }

  @Delete(':id')
  @ApiOperation({ summary: 'Cancel a schedule for good; it and its history stay readable' })
  @ApiHeader({ name: 'If-Match', required: false })
  @ApiOkResponse({ type: ScheduleDto })
  @ApiProblems(404, 409)
  async cancel(
    @CurrentTenant() tenant: Tenant,
    @Param('id', scheduleId) id: string,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) res: Response,
    @CurrentActor() actor: Actor,
  ): Promise<ScheduleDto> {
    const revision = ifMatch ? parseRevision(ifMatch) : null;
    const schedule = await this.schedules.cancel(tenant.id, id, revision, actor);
    res.setHeader('ETag', etagOf(schedule.revision));
    return ScheduleDto.from(schedule);
  }

  @Get(':id/revisions')
  @ApiOperation({
    summary: "A schedule's revisions, newest first",
    description:
      'Every revision is kept: the change (created, edited, paused, resumed, cancelled, ' +
      'auto_paused), who made it (changedByApiKeyId: the public id of the API key, never the ' +
      'key; null when dueline made it, with a note), when, the fields it changed with their ' +
      'values before and after, and the whole definition it left. A run names its revision.',
  })
  @ApiOkResponse({ type: RevisionPageDto })
  @ApiProblems(404)
  async revisions(
    @CurrentTenant() tenant: Tenant,
    @Param('id', scheduleId) id: string,
    @Query() query: PageQueryDto,
  ): Promise<RevisionPageDto> {
    const page = await this.schedules.revisions(tenant.id, id, {
      limit: query.limit,
      afterId: decodeCursor(query.cursor),
    });
    return { items: page.items.map(RevisionDto.from), nextCursor: encodeCursor(page.nextAfterId) };
  }

  @Get(':id/revisions/:revision')
  @ApiOperation({ summary: 'One revision: the definition a run of that revision ran under' })
  @ApiOkResponse({ type: RevisionDto })
  @ApiProblems(404)
  async revision(
    @CurrentTenant() tenant: Tenant,
    @Param('id', scheduleId) id: string,
    @Param('revision') revision: string,
  ): Promise<RevisionDto> {
    return RevisionDto.from(
      await this.schedules.revision(tenant.id, id, revisionNumberOf(revision)),
    );
  }
}
