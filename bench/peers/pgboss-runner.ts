import { PgBoss, type JobWithMetadata } from 'pg-boss';
import { env, postToSink, runPeer } from './post';
import { PGBOSS_SETTINGS } from './settings';

/** pg-boss's own cron as a peer, at the settings in ./settings (see there for why). */
const QUEUE = 'bench-peer';

runPeer(async () => {
  const sinkUrl = env('SINK_URL');
  const count = Number(env('SCHEDULES'));
  const boss = new PgBoss({
    connectionString: env('DATABASE_URL'),
    schema: env('PGBOSS_SCHEMA'),
    application_name: 'bench-pgboss-peer',
    cronMonitorIntervalSeconds: PGBOSS_SETTINGS.cronMonitorIntervalSeconds,
    cronWorkerIntervalSeconds: PGBOSS_SETTINGS.cronWorkerIntervalSeconds,
    useListenNotify: PGBOSS_SETTINGS.useListenNotify,
  });
  boss.on('error', (error: unknown) => console.error('pg-boss error', error));
  await boss.start();
  await boss.createQueue(QUEUE, { notify: PGBOSS_SETTINGS.queueNotify });
  for (let i = 0; i < count; i++) {
    await boss.schedule(
      QUEUE,
      '* * * * *',
      { scheduleId: `pgboss-${i}` },
      { key: `s${i}`, tz: 'UTC' },
    );
  }
  await boss.work<{ scheduleId: string }>(
    QUEUE,
    {
      batchSize: 50,
      pollingIntervalSeconds: PGBOSS_SETTINGS.pollingIntervalSeconds,
      includeMetadata: true,
    },
    async (jobs) => {
      // includeMetadata: true adds createdOn; the overloads do not narrow on a non-literal object.
      await Promise.all(
        (jobs as Array<JobWithMetadata<{ scheduleId: string }>>).map((job) =>
          postToSink(sinkUrl, {
            runId: job.id,
            attempt: job.retryCount + 1,
            scheduleId: job.data.scheduleId,
            scheduledAt: Math.floor(new Date(job.createdOn).getTime() / 60_000) * 60_000,
          }),
        ),
      );
    },
  );
  return async () => {
    await boss.stop({ graceful: true, timeout: 5000, close: true });
  };
});
