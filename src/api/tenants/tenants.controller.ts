import { Body, Controller, Get, Param, ParseUUIDPipe, Patch, Post } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { AdminOnly } from '../../common/auth/public.decorator';
import { ApiProblems } from '../../common/openapi/problem.dto';
import { TenantsService } from '../../tenants/tenants.service';
import { CreatedTenantDto, CreateTenantDto, TenantDto, UpdateTenantDto } from './tenant.dto';

@ApiTags('tenants (admin)')
@ApiBearerAuth('admin')
@AdminOnly()
@Controller('tenants')
@ApiProblems(400, 401)
export class TenantsController {
  constructor(private readonly tenants: TenantsService) {}

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
  async get(@Param('id', new ParseUUIDPipe()) id: string): Promise<TenantDto> {
    return TenantDto.from(await this.tenants.get(id));
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Rename a tenant or change its quotas' })
  @ApiOkResponse({ type: TenantDto })
  @ApiProblems(404)
  async update(
    @Param('id', new ParseUUIDPipe()) id: string,
    @Body() body: UpdateTenantDto,
  ): Promise<TenantDto> {
    return TenantDto.from(await this.tenants.update(id, body));
  }
}
