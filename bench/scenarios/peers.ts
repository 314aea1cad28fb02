import { readdirSync, readFileSync } from 'node:fs';
import {
  analyze,
  receivedCheck,
  undeliveredOf,
  withLedger,
  type ExpectedOccurrence,
} from '../analysis';
import { ledgerCheck } from '../ledger-check';
import { mapLimit } from '../api-client';
import type { BenchContext, ScenarioResult } from '../context';
import { observe } from '../observe';
import { PeerProcess } from '../peers/runner-process';
import { BULLMQ_SETTINGS_TEXT, PGBOSS_SETTINGS_TEXT } from '../peers/settings';
import { cpuTimes } from '../proc-stats';
import { ResourceMeter } from '../resources';
import { sleepUntil } from '../workload';
import { SINGLE, World } from '../world';

const MINUTE = 60_000;

/**
 * Every system runs the same schedules: `peerSchedules` cron schedules firing once a minute, over
 * `peerMinutes` minutes, all at once on the same Postgres, Redis and sink. pg-boss's cron only
 * fires at :00 (minute precision), so the three are phase-shifted by 20 s (pg-boss :00, dueline
 * :20, BullMQ :40): each minute-boundary flood then has the two cores to itself instead of three
 * systems measuring each other's CPU contention.
 */
const SYSTEMS = [
  { system: 'pg-boss', phaseSeconds: 0 },
  { system: 'dueline', phaseSeconds: 20 },
  { system: 'bullmq', phaseSeconds: 40 },
] as const;

export async function runPeers(ctx: BenchContext): Promise<ScenarioResult[]> {
  const { sink, flags } = ctx;
  const count = flags.peerSchedules;
  sink.reset();
  console.log(
    `\n== peers: ${count} once-a-minute schedules per system, ${flags.peerMinutes} minute(s)`,
  );
  const world = await World.start(ctx, 'peers', SINGLE, { tenants: flags.tenants });
  const peers: PeerProcess[] = [];
  try {
    const ours = await mapLimit(
      Array.from({ length: count }, (_, i) => i),
      16,
      (i) =>
        world.api.createSchedule(world.tenants[i % world.tenants.length], {
          cron: '20 * * * * *',
          timezone: 'UTC',
          overlapPolicy: 'allow',
        }),
    );
    const pgboss = await PeerProcess.start('pg-boss', 'pgboss-runner.js', {
      DATABASE_URL: world.db.url,
      PGBOSS_SCHEMA: 'bench_pgboss',
      SINK_URL: sink.url('pgboss'),
      SCHEDULES: String(count),
    });
    peers.push(pgboss);
    const bullmq = await PeerProcess.start('bullmq', 'bullmq-runner.js', {
      SINK_URL: sink.url('bullmq'),
      SCHEDULES: String(count),
      PATTERN: '40 * * * * *',
      BULLMQ_PREFIX: `dueline-bench-${process.pid}-${Date.now()}`,
    });
    peers.push(bullmq);

    const from = Math.ceil((Date.now() + 5000) / MINUTE) * MINUTE;
    const instants = (phaseSeconds: number) =>
      Array.from({ length: flags.peerMinutes }, (_, k) => from + k * MINUTE + phaseSeconds * 1000);
    const expected: Record<string, ExpectedOccurrence[]> = {
      dueline: ours.flatMap((s) => instants(20).map((at) => ({ scheduleId: s.id, at }))),
      'pg-boss': Array.from({ length: count }, (_, i) =>
        instants(0).map((at) => ({ scheduleId: `pgboss-${i}`, at })),
      ).flat(),
      bullmq: Array.from({ length: count }, (_, i) =>
        instants(40).map((at) => ({ scheduleId: `bullmq-${i}`, at })),
      ).flat(),
    };
    const window = { from, to: from + (flags.peerMinutes - 1) * MINUTE + 45_000 };
    console.log(`  first boundary ${new Date(from).toISOString()}; waiting…`);

    await sleepUntil(from - 2000);
    const pgbossMeter = new ResourceMeter(null);
    const bullmqMeter = new ResourceMeter(null);
    world.startMeter();
    pgbossMeter.start([{ name: 'pg-boss runner', pid: pgboss.pid }]);
    bullmqMeter.start([{ name: 'bullmq runner', pid: bullmq.pid }]);
    const redisPid = findProcess('redis-server');
    const redisStart = redisPid ? (cpuTimes(redisPid)?.self ?? null) : null;

    await observe({
      label: 'peers',
      sink,
      window,
      expected: () => Object.values(expected).flat(),
      drainMs: 30_000,
      everyMs: 10_000,
    });
    const usage = {
      dueline: world.meter.stop(),
      'pg-boss': pgbossMeter.stop(),
      bullmq: bullmqMeter.stop(),
    };
    const redisEnd = redisPid ? (cpuTimes(redisPid)?.self ?? null) : null;
    const redisCpu =
      redisStart !== null && redisEnd !== null
        ? Math.round((redisEnd - redisStart) * 100) / 100
        : null;

    const bySink: Record<string, string> = {
      dueline: 'ours',
      'pg-boss': 'pgboss',
      bullmq: 'bullmq',
    };
    const oursReceipts = sink.all().filter((r) => r.system === 'ours');
    const verdict = await ledgerCheck(
      world.db.url,
      undeliveredOf(oursReceipts, expected.dueline),
      (e) => receivedCheck(sink.all())(e),
    );
    return SYSTEMS.map(({ system, phaseSeconds }) => {
      const receipts = sink.all().filter((r) => r.system === bySink[system]);
      const raw = analyze(receipts, expected[system], window);
      // Only dueline's ledger can say late vs lost; for the peers undelivered counts as lost.
      const delivery = system === 'dueline' ? withLedger(raw, verdict) : raw;
      const notes: string[] = [];
      const extra: Record<string, unknown> = {
        phaseSeconds,
        firstBoundary: new Date(from).toISOString(),
      };
      if (system === 'pg-boss') {
        extra.settings = PGBOSS_SETTINGS_TEXT;
        notes.push('Postgres CPU is shared with the dueline row (same server, same minutes)');
      }
      if (system === 'bullmq') {
        extra.settings = BULLMQ_SETTINGS_TEXT;
        extra.redisCpuSeconds = redisCpu;
      }
      if (system === 'dueline') {
        notes.push('Postgres CPU includes the pg-boss peer');
        const apiNote = world.apiNote();
        if (apiNote) notes.push(apiNote);
      }
      const runner = peers.find((p) => p.name === system);
      if (runner && runner.messages().length > 0) extra.runnerOutput = runner.messages().slice(-10);
      return {
        scenario: 'peers',
        system,
        label: `peers: ${system}`,
        params: { schedules: count, minutes: flags.peerMinutes, cron: 'once a minute' },
        delivery,
        resources: usage[system],
        extra,
        notes,
      };
    });
  } finally {
    for (const peer of peers) await peer.stop().catch(() => undefined);
    await world.close();
  }
}

function findProcess(comm: string): number | null {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === comm) return Number(entry);
    } catch {
      // gone
    }
  }
  return null;
}
