import { Body, Controller, Get, Headers, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { BackfillsService, type BackfillRequest } from '../../backfills';
import { ApiProblems } from '../../common';
import type { Actor } from '../../schedules';
import type { Tenant } from '../../tenants';
import { CurrentActor, CurrentTenant } from '../auth/current-tenant.decorator';
import { requireIdempotencyKey } from '../common/required-header';
import { ResourceIdPipe } from '../common/resource-id.pipe';
import { BackfillDto, CreateBackfillDto, DryRunDto, PlannedInstantDto } from './backfill.dto';

@ApiTags('backfills')
@ApiBearerAuth()
@ApiProblems(400, 401, 404, 429)
@Controller()
export class BackfillsController {
  constructor(private readonly backfills: BackfillsService) {}

  @Post('schedules/:id/backfills')
  @ApiOperation({
    summary: "Run a schedule's past instants again (or, with dryRun, show exactly which)",
    description:
      "The instants of [from, to] are the schedule's own, DST policy and excluded dates applied. " +
      'Each backfilled run is marked trigger backfill and goes through admission like any run. ' +
      'Its identity is (schedule, revision, instant, backfill id), so it never collides with the ' +
      'scheduled run of the same instant; instants at or after the point the poller has reached ' +
      'are left to the schedule (left_to_schedule). Idempotent by key: the same key and body ' +
      'answer the same backfill.',
  })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: 'required unless dryRun' })
  @ApiCreatedResponse({ type: BackfillDto })
  @ApiOkResponse({ type: DryRunDto, description: 'dryRun: the plan, nothing written' })
  @ApiProblems(409, 422)
  async create(
    @CurrentTenant() tenant: Tenant,
    @CurrentActor() actor: Actor,
    @Param('id', new ResourceIdPipe('schedule')) scheduleId: string,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Req() req: Request,
    @Body() body: CreateBackfillDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<BackfillDto | DryRunDto> {
    const request: BackfillRequest = {
      from: new Date(body.from),
      to: new Date(body.to),
      reprocess: body.reprocess ?? 'missing',
      overlapPolicy: body.overlapPolicy ?? 'buffer_one',
      maxConcurrent: body.maxConcurrent ?? 1,
      order: body.order ?? 'oldest',
    };
    if (body.dryRun) {
      res.status(200);
      const instants = await this.backfills.dryRun(tenant.id, scheduleId, request);
      return { instants: instants.map(PlannedInstantDto.from) };
    }
    const key = requireIdempotencyKey(idempotencyKey);
    const { backfill, created } = await this.backfills.create(
      tenant.id,
      scheduleId,
      request,
      key,
      req.body,
      actor.apiKeyId!,
    );
    res.status(201).location(`/backfills/${backfill.id}`);
    if (!created) res.setHeader('Idempotent-Replayed', 'true');
    return BackfillDto.from(backfill);
  }

  @Get('backfills/:id')
  @ApiOperation({ summary: 'A backfill and its progress' })
  @ApiOkResponse({ type: BackfillDto })
  async get(
    @CurrentTenant() tenant: Tenant,
    @Param('id', new ResourceIdPipe('backfill')) id: string,
  ): Promise<BackfillDto> {
    return BackfillDto.from(await this.backfills.get(tenant.id, id));
  }

  @Post('backfills/:id/cancel')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Cancel a backfill: no further run is created, its unfinished runs are cancelled',
  })
  @ApiOkResponse({ type: BackfillDto })
  @ApiProblems(409)
  async cancel(
    @CurrentTenant() tenant: Tenant,
    @Param('id', new ResourceIdPipe('backfill')) id: string,
  ): Promise<BackfillDto> {
    return BackfillDto.from(await this.backfills.cancel(tenant.id, id));
  }
}
