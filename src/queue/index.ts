export { PgBossService } from './pg-boss.service';
export { QueueModule } from './queue.module';
export { PGBOSS_SCHEMA, RUNS_QUEUE, type RunJob } from './queue.constants';
export { RunJobsRepository } from './run-jobs.repository';
