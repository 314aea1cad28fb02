export { PgBossService } from './pg-boss.service';
export { QueueModule } from './queue.module';
export {
  HIGH_RUNS_QUEUE,
  PGBOSS_SCHEMA,
  RUN_QUEUES,
  RUNS_QUEUE,
  type RunJob,
  type RunToPublish,
} from './queue.constants';
export { RunJobsRepository } from './run-jobs.repository';
