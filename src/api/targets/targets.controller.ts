import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { ApiProblems, decodeCursor } from '../../common';
import { ResourceIdPipe } from '../common/resource-id.pipe';
import { TargetsService } from '../../targets';
import type { Tenant } from '../../tenants';
import { CurrentTenant } from '../auth/current-tenant.decorator';
import {
  CreateTargetDto,
  ListTargetsQueryDto,
  RotatedSecretDto,
  RotateSecretDto,
  TargetDto,
  TargetPageDto,
  UpdateTargetDto,
} from './target.dto';

const targetId = new ResourceIdPipe('target');
const ID_PARAM = { name: 'id', format: 'uuid', description: 'target id' } as const;

@ApiTags('targets')
@ApiBearerAuth()
@ApiProblems(401, 429)
@Controller('targets')
export class TargetsController {
  constructor(private readonly targets: TargetsService) {}

  @Post()
  @ApiOperation({ summary: 'Register a target (the URL is checked against the address policy)' })
  @ApiCreatedResponse({ type: TargetDto })
  @ApiProblems(400, 409)
  async create(@CurrentTenant() tenant: Tenant, @Body() body: CreateTargetDto): Promise<TargetDto> {
    return TargetDto.from(await this.targets.create(tenant.id, body));
  }

  @Get()
  @ApiOperation({ summary: "List the tenant's targets, oldest first (cursor pagination)" })
  @ApiOkResponse({ type: TargetPageDto })
  @ApiProblems(400)
  async list(
    @CurrentTenant() tenant: Tenant,
    @Query() query: ListTargetsQueryDto,
  ): Promise<TargetPageDto> {
    const page = await this.targets.list(tenant.id, {
      limit: query.limit,
      afterId: decodeCursor(query.cursor),
    });
    return {
      items: page.items.map((target) => TargetDto.from(target)),
      nextCursor: page.nextCursor,
    };
  }

  @Get(':id')
  @ApiOperation({ summary: 'Read a target (never its signing secret)' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: TargetDto })
  @ApiProblems(404)
  async get(
    @CurrentTenant() tenant: Tenant,
    @Param('id', targetId) id: string,
  ): Promise<TargetDto> {
    return TargetDto.from(await this.targets.get(tenant.id, id));
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Change a target; signingSecret: null removes the secret' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: TargetDto })
  @ApiProblems(400, 404, 409)
  async update(
    @CurrentTenant() tenant: Tenant,
    @Param('id', targetId) id: string,
    @Body() body: UpdateTargetDto,
  ): Promise<TargetDto> {
    return TargetDto.from(await this.targets.update(tenant.id, id, body));
  }

  @Post(':id/secrets/rotate')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Rotate the signing secret with an overlap',
    description:
      'The new secret signs from now on; the one it replaces keeps signing beside it for ' +
      '`overlapSeconds` (each call then carries both signatures), then is dropped. Without ' +
      '`signingSecret` one is generated and returned once.',
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: RotatedSecretDto })
  @ApiProblems(400, 404)
  async rotateSecret(
    @CurrentTenant() tenant: Tenant,
    @Param('id', targetId) id: string,
    @Body() body: RotateSecretDto,
  ): Promise<RotatedSecretDto> {
    const rotated = await this.targets.rotateSecret(tenant.id, id, body);
    return { target: TargetDto.from(rotated.target), generatedSecret: rotated.generatedSecret };
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete a target (soft: runs keep their history; its name is free again)',
    description: 'Refused with 409 while active or paused schedules use the target.',
  })
  @ApiParam(ID_PARAM)
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiProblems(404, 409)
  async delete(@CurrentTenant() tenant: Tenant, @Param('id', targetId) id: string): Promise<void> {
    await this.targets.delete(tenant.id, id);
  }
}
