import { Global, Module } from '@nestjs/common';
import { PgBossService } from './pg-boss.service';
import { RunJobsRepository } from './run-jobs.repository';

@Global()
@Module({
  providers: [PgBossService, RunJobsRepository],
  exports: [PgBossService, RunJobsRepository],
})
export class QueueModule {}
