import { Queue, Worker } from 'bullmq';
import { env, postToSink, runPeer } from './post';

/**
 * BullMQ job schedulers as a peer, on the local Redis: `upsertJobScheduler` with a 6-field
 * pattern (the same occurrences as the other systems, phase-shifted by the caller), a worker with
 * concurrency 50. A scheduler job's `opts.prevMillis` is the nominal instant it was made for.
 * Keys live under a prefix of their own and are removed on the way out.
 */
const QUEUE = 'bench-peer';

runPeer(async () => {
  const sinkUrl = env('SINK_URL');
  const count = Number(env('SCHEDULES'));
  const pattern = env('PATTERN');
  const prefix = env('BULLMQ_PREFIX');
  const connection = { host: '127.0.0.1', port: Number(process.env.REDIS_PORT ?? 6379) };
  const queue = new Queue(QUEUE, { connection, prefix });
  for (let i = 0; i < count; i++) {
    await queue.upsertJobScheduler(
      `s${i}`,
      { pattern, tz: 'UTC' },
      { name: 'tick', data: { scheduleId: `bullmq-${i}` }, opts: { removeOnComplete: 1000 } },
    );
  }
  const worker = new Worker<{ scheduleId: string }>(
    QUEUE,
    async (job) => {
      await postToSink(sinkUrl, {
        runId: job.id!,
        attempt: job.attemptsMade + 1,
        scheduleId: job.data.scheduleId,
        scheduledAt: Number(job.opts.prevMillis ?? job.timestamp),
      });
    },
    { connection, prefix, concurrency: 50 },
  );
  worker.on('error', (error) => console.error('bullmq worker error', error));
  await worker.waitUntilReady();
  return async () => {
    await worker.close();
    for (let i = 0; i < count; i++) await queue.removeJobScheduler(`s${i}`);
    await queue.obliterate({ force: true });
    await queue.close();
  };
});
