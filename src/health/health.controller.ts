import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  HealthCheck,
  HealthCheckResult,
  HealthCheckService,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { ApiProblems, Public } from '../common';
import { QueueHealthIndicator } from './queue.health';

@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly queue: QueueHealthIndicator,
  ) {}

  @Get('live')
  @ApiOperation({ summary: 'Liveness: the process is up', security: [] })
  @ApiOkResponse({ description: 'The process is up.' })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({ summary: 'Readiness: database and queue reachable', security: [] })
  // Its own 503 schema says application/json; the answer is our problem document (ApiProblems).
  @HealthCheck({ noCache: true, swaggerDocumentation: false })
  @ApiOkResponse({ description: 'Database and queue are reachable.' })
  @ApiProblems(503)
  ready(): Promise<HealthCheckResult> {
    return this.health.check([
      () => this.database.pingCheck('database', { timeout: 2000 }),
      () => this.queue.check('queue'),
    ]);
  }
}
