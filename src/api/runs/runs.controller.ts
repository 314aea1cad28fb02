import { Body, Controller, Get, Headers, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { ValidationError, ApiProblems } from '../../common';
import { AdmissionService } from '../../admission';
import { ExecutionService } from '../../execution';
import { OccurrencesService } from '../../occurrences';
import type { Tenant } from '../../tenants';
import { CurrentTenant } from '../auth/current-tenant.decorator';
import { ResourceIdPipe } from '../common/resource-id.pipe';
import { acceptedOrThrow, claimOrThrow, heldOrThrow, toAttemptReport } from './run-contract.mapper';
import { CompleteRunDto, HeartbeatRunDto } from './run-request.dto';
import {
  CancelRunResponseDto,
  ClaimResponseDto,
  CompleteResponseDto,
  HeartbeatResponseDto,
  RunDetailDto,
  RunDto,
} from './run-response.dto';

const runId = new ResourceIdPipe('run');
const ID_PARAM = { name: 'id', format: 'uuid', description: 'run id' } as const;
const WORKER_ID = /^[\x21-\x7e]{1,200}$/;

@ApiTags('runs')
@ApiBearerAuth()
@ApiProblems(401, 404, 429)
@ApiParam(ID_PARAM)
@Controller('runs')
export class RunsController {
  constructor(
    private readonly runs: OccurrencesService,
    private readonly admission: AdmissionService,
    private readonly execution: ExecutionService,
  ) {}

  @Get(':id')
  @ApiOperation({ summary: 'A run with its attempts' })
  @ApiOkResponse({ type: RunDetailDto })
  async get(
    @CurrentTenant() tenant: Tenant,
    @Param('id', runId) id: string,
  ): Promise<RunDetailDto> {
    return RunDetailDto.fromDetail(await this.runs.get(tenant.id, id));
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Cancel a run: no attempt starts after this; one in flight may still have acted',
  })
  @ApiOkResponse({ type: CancelRunResponseDto })
  @ApiProblems(409)
  async cancel(
    @CurrentTenant() tenant: Tenant,
    @Param('id', runId) id: string,
  ): Promise<CancelRunResponseDto> {
    const { run, inFlight } = await this.runs.cancel(tenant.id, id);
    return { ...RunDto.from(run), inFlight };
  }

  @Post(':id/claim')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Worker contract: claim a due run (raises its fencing token, starts its lease)',
  })
  @ApiHeader({ name: 'X-Worker-Id', required: false, description: 'recorded on the attempt' })
  @ApiOkResponse({ type: ClaimResponseDto })
  @ApiProblems(400, 409)
  async claim(
    @CurrentTenant() tenant: Tenant,
    @Param('id', runId) id: string,
    @Headers('x-worker-id') workerId: string | undefined,
  ): Promise<ClaimResponseDto> {
    if (workerId !== undefined && !WORKER_ID.test(workerId)) {
      throw new ValidationError('X-Worker-Id must be 1-200 printable ASCII characters');
    }
    const result = await this.admission.claim(tenant.id, id, workerId ?? 'external');
    return ClaimResponseDto.from(claimOrThrow(id, result));
  }

  @Post(':id/heartbeat')
  @HttpCode(200)
  @ApiOperation({ summary: 'Worker contract: renew the lease; 409 when the fence moved on' })
  @ApiOkResponse({ type: HeartbeatResponseDto })
  @ApiProblems(400, 409)
  async heartbeat(
    @CurrentTenant() tenant: Tenant,
    @Param('id', runId) id: string,
    @Body() body: HeartbeatRunDto,
  ): Promise<HeartbeatResponseDto> {
    const result = await this.execution.heartbeat(tenant.id, id, body.fencingToken);
    const held = heldOrThrow(id, body.fencingToken, result);
    return {
      runId: id,
      fencingToken: body.fencingToken,
      leaseUntil: held.leaseUntil.toISOString(),
      cancelRequested: held.cancelRequested,
    };
  }

  @Post(':id/complete')
  @HttpCode(200)
  @ApiOperation({ summary: 'Worker contract: report the attempt under the current fence' })
  @ApiOkResponse({ type: CompleteResponseDto })
  @ApiProblems(400, 409)
  async complete(
    @CurrentTenant() tenant: Tenant,
    @Param('id', runId) id: string,
    @Body() body: CompleteRunDto,
  ): Promise<CompleteResponseDto> {
    const result = await this.execution.complete(
      tenant.id,
      id,
      body.fencingToken,
      toAttemptReport(body),
    );
    const accepted = acceptedOrThrow(id, body.fencingToken, result);
    return {
      runId: id,
      state: accepted.state,
      reason: accepted.reason,
      reasonDetail: accepted.reasonDetail,
      nextAttemptAt: accepted.nextAttemptAt?.toISOString() ?? null,
    };
  }
}
