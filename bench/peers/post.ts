/**
 * What a peer's worker does with a job: the same request dueline sends its targets (headers
 * X-Dueline-Run-Id/Attempt/Scheduled-At, Idempotency-Key, JSON body with scheduleId), so the sink
 * judges every system by one rule. Node's fetch keeps connections alive, as dueline's client does.
 */
export async function postToSink(
  url: string,
  run: { runId: string; attempt: number; scheduleId: string; scheduledAt: number },
): Promise<void> {
  const scheduledAt = new Date(run.scheduledAt).toISOString();
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'Idempotency-Key': run.runId,
      'X-Dueline-Run-Id': run.runId,
      'X-Dueline-Attempt': String(run.attempt),
      'X-Dueline-Scheduled-At': scheduledAt,
    },
    body: JSON.stringify({ ...run, scheduledAt, payload: {} }),
  });
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`sink answered ${res.status}`);
}

/** Reads a required environment variable of a runner process. */
export function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

/** Runs `main`, prints READY once it resolves, and calls `stop` on SIGTERM before exiting 0. */
export function runPeer(main: () => Promise<() => Promise<void>>): void {
  main().then(
    (stop) => {
      console.log('READY');
      process.once('SIGTERM', () => {
        const deadline = setTimeout(() => process.exit(1), 10_000);
        void stop().finally(() => {
          clearTimeout(deadline);
          process.exit(0);
        });
      });
    },
    (error: unknown) => {
      console.error(error instanceof Error ? error.stack : error);
      process.exit(1);
    },
  );
}
