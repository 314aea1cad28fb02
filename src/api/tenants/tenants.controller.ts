import { Body, Controller, Get, Param, Patch, Post } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { AdminOnly, ApiProblems } from '../../common';
import { TenantsService } from '../../tenants';
import { UsageService } from '../../usage';
import { UsageDto } from '../usage/usage.dto';
import { ResourceIdPipe } from '../common/resource-id.pipe';
import { CreatedTenantDto, CreateTenantDto, TenantDto, UpdateTenantDto } from './tenant.dto';

const tenantId = new ResourceIdPipe('tenant');

@ApiTags('tenants (admin)')
@ApiBearerAuth('admin')
@AdminOnly()
@Controller('tenants')
@ApiProblems(400, 401)
export class TenantsController {
  constructor(
    private readonly tenants: TenantsService,
    private readonly usage: UsageService,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Create a tenant with quotas; returns its API key once' })
  @ApiCreatedResponse({ type: CreatedTenantDto })
  async create(@Body() body: CreateTenantDto): Promise<CreatedTenantDto> {
    const { tenant, apiKey } = await this.tenants.create(body.name, body.quotas ?? {});
    return { ...TenantDto.from(tenant), apiKey };
  }

  @Get(':id')
  @ApiOperation({ summary: 'Read a tenant' })
  @ApiOkResponse({ type: TenantDto })
  @ApiProblems(404)
  async get(@Param('id', tenantId) id: string): Promise<TenantDto> {
    return TenantDto.from(await this.tenants.get(id));
  }

  @Get(':id/usage')
  @ApiOperation({ summary: "A tenant's usage, as its own GET /usage shows it" })
  @ApiOkResponse({ type: UsageDto })
  @ApiProblems(404)
  async getUsage(@Param('id', tenantId) id: string): Promise<UsageDto> {
    return UsageDto.from(await this.usage.of(await this.tenants.get(id)));
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Rename a tenant or change its quotas' })
  @ApiOkResponse({ type: TenantDto })
  @ApiProblems(404)
  async update(
    @Param('id', tenantId) id: string,
    @Body() body: UpdateTenantDto,
  ): Promise<TenantDto> {
    return TenantDto.from(await this.tenants.update(id, body));
  }
}
