/**
 * pg-boss's cron at its most precise settings: cronMonitorIntervalSeconds 1 (the minimum; due
 * schedules are looked for every second) and cronWorkerIntervalSeconds 1 (its internal send-it
 * queue polled every second), the target queue with NOTIFY and its worker polling every 0.5 s
 * (the minimum). pg-boss cron resolves to the minute (an occurrence is filed in a 60 s slot), so
 * its schedules are `* * * * *`; a job's nominal instant is its creation time truncated to the
 * minute.
 */
export const PGBOSS_SETTINGS = {
  cronMonitorIntervalSeconds: 1,
  cronWorkerIntervalSeconds: 1,
  pollingIntervalSeconds: 0.5,
  useListenNotify: true,
  queueNotify: true,
};

export const PGBOSS_SETTINGS_TEXT =
  'pg-boss 12: cronMonitorIntervalSeconds=1, cronWorkerIntervalSeconds=1 (both minimum), ' +
  'useListenNotify + queue notify, worker pollingIntervalSeconds=0.5, batchSize 50';

export const BULLMQ_SETTINGS_TEXT =
  'BullMQ 5: upsertJobScheduler({ pattern, tz: UTC }), Worker concurrency 50, local Redis';
