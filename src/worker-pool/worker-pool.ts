import { type ChildProcess, fork } from 'node:child_process';
import { NO_ROOM, roomLeft, type HandoffReceiver, type HandoffRoom } from '../handoff';
import type { Lifecycle } from '../observability';
import { HIGH_RUNS_QUEUE, type HandedOffJob } from '../queue';
import { workerExecArgv } from './child-node-options';
import { isPoolMessage, type ProcessMetrics, WORKER_PROCESS_FLAG } from './pool-message';
import { failuresAfterExit, restartDelayMs } from './restart-backoff';

export interface WorkerPoolOptions {
  /** Children kept alive. */
  size: number;
  /** The program each child runs (the service's own entry point, with WORKER_PROCESS_FLAG). */
  entry: string;
  /** The children's environment: the primary's, with the worker role and the resolved database. */
  env: NodeJS.ProcessEnv;
  lifecycle: Lifecycle;
  /** Bound on `start()` waiting for the first children to say they are ready. */
  readyTimeoutMs: number;
  /** Bound on a child's answer to a metrics request (a busy child is left out of one scrape). */
  metricsTimeoutMs: number;
  /** Where each ready child is registered to take the poller's handoffs (see handoff/). */
  handoff: { register(receiver: HandoffReceiver): () => void };
}

interface Slot {
  child: ChildProcess | null;
  /** Set by the child's `ready` message. */
  workerId: string | null;
  startedAt: number;
  /** Deaths in a row of this slot's children that died young. */
  failures: number;
  restartTimer: NodeJS.Timeout | null;
  /** Removes the ready child from the handoff's receivers. */
  leaveHandoff: (() => void) | null;
}

/**
 * A child as the poller's handoff sees it: its room as it last reported it, less what was
 * handed to it since (its next report counts that in).
 */
export class ChildReceiver implements HandoffReceiver {
  private reported: HandoffRoom = NO_ROOM;
  private handedSince: HandoffRoom = { high: 0, other: 0 };

  constructor(private readonly child: ChildProcess) {}

  reportedRoom(room: HandoffRoom): void {
    this.reported = room;
    this.handedSince = { high: 0, other: 0 };
  }

  room(): HandoffRoom {
    return roomLeft(this.reported, this.handedSince);
  }

  take(jobs: readonly HandedOffJob[]): void {
    for (const job of jobs) {
      if (job.queue === HIGH_RUNS_QUEUE) this.handedSince.high += job.runs.length;
      else this.handedSince.other += job.runs.length;
    }
    // A child gone mid-send never claims them: their jobs are the queue's after the grace.
    if (this.child.connected) this.child.send({ kind: 'handoff.jobs', jobs }, () => undefined);
  }
}

/**
 * The worker role in processes of its own beside the primary (api, poller, relay), so one
 * `npm start` uses every core. Each child is a whole worker replica: its own pools, its own
 * workerId, fencing and leases exactly as a `ROLES=worker` replica on another machine. The pool
 * only keeps their number: a child that dies is forked again after a growing delay
 * (restart-backoff.ts), and what it held is settled by the relay's lease sweeper like any dead
 * replica's. `stop()` drains the children (SIGTERM: each finishes or releases its attempts)
 * before the primary closes its own roles. A child watches its IPC channel and exits when the
 * primary is gone (worker-process.ts), so a killed primary leaves no worker behind.
 */
export class WorkerPool {
  private readonly slots: Slot[];
  private stopping = false;
  private requestSeq = 0;
  private readonly pending = new Map<number, (metrics: ProcessMetrics | null) => void>();
  private readonly firstReady: Array<Promise<void>> = [];

  constructor(private readonly options: WorkerPoolOptions) {
    this.slots = Array.from({ length: options.size }, () => ({
      child: null,
      workerId: null,
      startedAt: 0,
      failures: 0,
      restartTimer: null,
      leaveHandoff: null,
    }));
  }

  /** Forks every child; resolves once each has said it is ready or exited (or the bound passed). */
  async start(): Promise<void> {
    for (const slot of this.slots) this.firstReady.push(this.spawn(slot));
    await Promise.race([
      Promise.all(this.firstReady),
      new Promise<void>((done) => setTimeout(done, this.options.readyTimeoutMs).unref()),
    ]);
  }

  /** Children alive and ready now. */
  get live(): number {
    return this.slots.filter((slot) => slot.child && slot.workerId).length;
  }

  /** Process ids of the children alive now (tests and the banner). */
  get pids(): number[] {
    return this.slots.flatMap((slot) => (slot.child?.pid ? [slot.child.pid] : []));
  }

  /**
   * Every ready child's metrics, asked over IPC; a child that does not answer within the bound
   * is left out of this scrape rather than holding it up.
   */
  async metrics(): Promise<ProcessMetrics[]> {
    const answers = await Promise.all(
      this.slots
        .filter((slot) => slot.workerId && slot.child?.connected)
        .map((slot) => this.askMetrics(slot.child!)),
    );
    return answers.filter((answer): answer is ProcessMetrics => answer !== null);
  }

  /**
   * Stops restarting, asks every child to drain (SIGTERM) and waits for them to exit, up to
   * `timeoutMs`; a child still alive then is killed, and the sweeper settles what it held.
   */
  async stop(timeoutMs: number): Promise<void> {
    this.stopping = true;
    const exits: Array<Promise<void>> = [];
    for (const slot of this.slots) {
      // Draining children take no more handoffs.
      slot.leaveHandoff?.();
      slot.leaveHandoff = null;
      if (slot.restartTimer) clearTimeout(slot.restartTimer);
      slot.restartTimer = null;
      const child = slot.child;
      if (!child || child.exitCode !== null || child.signalCode !== null) continue;
      exits.push(new Promise<void>((done) => child.once('exit', () => done())));
      child.kill('SIGTERM');
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(exits),
      new Promise<void>((done) => (timer = setTimeout(done, timeoutMs))),
    ]);
    clearTimeout(timer);
    for (const slot of this.slots) slot.child?.kill('SIGKILL');
    for (const answer of this.pending.values()) answer(null);
    this.pending.clear();
  }

  /** Forks the slot's child; the promise resolves at its first `ready` or its exit. */
  private spawn(slot: Slot): Promise<void> {
    const child = fork(this.options.entry, [WORKER_PROCESS_FLAG], {
      env: this.options.env,
      execArgv: workerExecArgv(process.execArgv),
    });
    slot.child = child;
    slot.workerId = null;
    slot.startedAt = Date.now();
    const receiver = new ChildReceiver(child);
    return new Promise<void>((settled) => {
      child.on('message', (message: unknown) => {
        if (!isPoolMessage(message)) return;
        switch (message.kind) {
          case 'handoff.room':
            receiver.reportedRoom(message.room);
            return;
          case 'ready':
            slot.workerId = message.workerId;
            slot.leaveHandoff = this.options.handoff.register(receiver);
            this.options.lifecycle.emit({
              kind: 'worker_process.ready',
              pid: child.pid ?? 0,
              workerId: message.workerId,
              live: this.live,
            });
            settled();
            return;
          case 'metrics.reply':
            this.pending.get(message.id)?.(message.metrics);
            this.pending.delete(message.id);
            return;
          case 'metrics.request':
          case 'handoff.jobs':
            return;
        }
      });
      // An IPC error (the child went away mid-send) is followed by its exit, handled there.
      child.on('error', () => undefined);
      child.once('exit', (code, signal) => {
        settled();
        this.exited(slot, child, code, signal);
      });
    });
  }

  private exited(
    slot: Slot,
    child: ChildProcess,
    code: number | null,
    signal: NodeJS.Signals | null,
  ): void {
    if (slot.child !== child) return;
    slot.leaveHandoff?.();
    slot.leaveHandoff = null;
    slot.child = null;
    slot.workerId = null;
    let restartInMs: number | null = null;
    if (!this.stopping) {
      slot.failures = failuresAfterExit(slot.failures, Date.now() - slot.startedAt);
      restartInMs = restartDelayMs(slot.failures);
      slot.restartTimer = setTimeout(() => {
        slot.restartTimer = null;
        if (!this.stopping) void this.spawn(slot);
      }, restartInMs);
    }
    this.options.lifecycle.emit({
      kind: 'worker_process.exited',
      pid: child.pid ?? 0,
      code,
      signal,
      restartInMs,
      live: this.live,
    });
  }

  private askMetrics(child: ChildProcess): Promise<ProcessMetrics | null> {
    const id = ++this.requestSeq;
    return new Promise((answer) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        answer(null);
      }, this.options.metricsTimeoutMs);
      this.pending.set(id, (metrics) => {
        clearTimeout(timer);
        answer(metrics);
      });
      child.send({ kind: 'metrics.request', id }, (error) => {
        if (!error) return;
        this.pending.delete(id);
        clearTimeout(timer);
        answer(null);
      });
    });
  }
}
