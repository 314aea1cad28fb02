import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiProblems } from '../../common';
import type { Tenant } from '../../tenants';
import { UsageService } from '../../usage';
import { CurrentTenant } from '../auth/current-tenant.decorator';
import { UsageDto } from './usage.dto';

@ApiTags('usage')
@ApiBearerAuth()
@ApiProblems(401, 429)
@Controller('usage')
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  @Get()
  @ApiOperation({
    summary:
      "The tenant's quotas against its use: schedules, waiting runs, projected busiest minutes",
  })
  @ApiOkResponse({ type: UsageDto })
  async get(@CurrentTenant() tenant: Tenant): Promise<UsageDto> {
    return UsageDto.from(await this.usage.of(tenant));
  }
}
