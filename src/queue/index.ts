export { PgBossService } from './pg-boss.service';
export { QueueModule } from './queue.module';
export {
  HIGH_RUNS_QUEUE,
  PGBOSS_SCHEMA,
  RUN_QUEUES,
  RUNS_QUEUE,
  runsOf,
  type HandedOffJob,
  type RunJob,
  type RunsJob,
  type RunToPublish,
} from './queue.constants';
export { RunJobsRepository } from './run-jobs.repository';
