import {
  cpuTimes,
  machineBusySeconds,
  peakRssMb,
  postgresCpuSeconds,
  postgresPssMb,
  processTable,
  serviceTreeCpuSeconds,
  serviceTreeResidentOnceMb,
  serviceTreeRssMb,
  type ProcessTable,
} from './proc-stats';

export interface ProcessUsage {
  name: string;
  pid: number;
  cpuSeconds: number;
  /** Peak of the summed resident sets of the replica and its worker processes. */
  peakRssMb: number;
  /** The same with the pages they share counted once (serviceTreeResidentOnceMb). */
  peakResidentOnceMb: number;
}

export interface ResourceUsage {
  /** Length of the metered span, seconds. */
  seconds: number;
  /**
   * peakRssMb and peakResidentOnceMb: the largest replica's (a replica's figure includes its
   * worker processes).
   */
  service: {
    cpuSeconds: number;
    peakRssMb: number;
    peakResidentOnceMb: number;
    processes: ProcessUsage[];
  };
  postgres: { cpuSeconds: number | null; peakPssMb: number | null };
  /** This bench process (sink, peers' sink traffic, progress), CPU seconds. */
  benchCpuSeconds: number;
  /**
   * CPU seconds the machine spent on anything else (other users' tests, …): busy time minus the
   * service, Postgres and this process. Figures taken while it is large are not comparable.
   */
  otherCpuSeconds: number;
}

interface Metered {
  name: string;
  pid: number;
  startCpu: number;
  lastCpu: number;
  peakRss: number;
  peakResidentOnce: number;
  retired: boolean;
}

/**
 * Meters CPU seconds and peak memory of the processes under test (service replicas, or a peer's
 * runner) and of Postgres, over a span. A replica is metered with its child processes (a
 * primary's worker pool): CPU of the whole tree, peak of the tree's summed resident set, and
 * peak of its resident memory with shared pages counted once. Samples once a second so a process that is SIGKILLed
 * mid-run still reports what it used until shortly before; `retire()` takes an exact last reading.
 */
export class ResourceMeter {
  private readonly processes = new Map<number, Metered>();
  private startedAt = 0;
  private pgStartCpu: number | null = null;
  private machineStart = 0;
  private benchStart = 0;
  private pgPeakPss: number | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly postmasterPid: number | null) {}

  start(processes: Array<{ name: string; pid: number }>): void {
    this.startedAt = performance.now();
    for (const p of processes) this.add(p.name, p.pid);
    this.pgStartCpu = this.postmasterPid ? postgresCpuSeconds(this.postmasterPid) : null;
    this.machineStart = machineBusySeconds();
    this.benchStart = cpuTimes(process.pid)?.self ?? 0;
    this.sample();
    this.timer = setInterval(() => this.sample(), 1000);
    this.timer.unref();
  }

  /** A process started after the meter (e.g. a replacement replica). */
  add(name: string, pid: number): void {
    const cpu = serviceTreeCpuSeconds(pid) ?? 0;
    this.processes.set(pid, {
      name,
      pid,
      startCpu: cpu,
      lastCpu: cpu,
      peakRss: peakRssMb(pid) ?? 0,
      peakResidentOnce: peakRssMb(pid) ?? 0,
      retired: false,
    });
  }

  /** Takes a final reading of a process about to be killed or stopped. */
  retire(pid: number): void {
    const p = this.processes.get(pid);
    if (!p || p.retired) return;
    this.read(p);
    p.retired = true;
  }

  stop(): ResourceUsage {
    this.sample();
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const pgEnd = this.postmasterPid ? postgresCpuSeconds(this.postmasterPid) : null;
    const machine = machineBusySeconds() - this.machineStart;
    const bench = (cpuTimes(process.pid)?.self ?? 0) - this.benchStart;
    const processes = [...this.processes.values()].map((p) => ({
      name: p.name,
      pid: p.pid,
      cpuSeconds: round(p.lastCpu - p.startCpu),
      peakRssMb: round(p.peakRss),
      peakResidentOnceMb: round(p.peakResidentOnce),
    }));
    const serviceCpu = processes.reduce((sum, p) => sum + p.cpuSeconds, 0);
    const pgCpu = pgEnd !== null && this.pgStartCpu !== null ? pgEnd - this.pgStartCpu : 0;
    return {
      seconds: round((performance.now() - this.startedAt) / 1000),
      benchCpuSeconds: round(bench),
      otherCpuSeconds: round(Math.max(0, machine - bench - serviceCpu - pgCpu)),
      service: {
        cpuSeconds: round(serviceCpu),
        peakRssMb: round(Math.max(0, ...processes.map((p) => p.peakRssMb))),
        peakResidentOnceMb: round(Math.max(0, ...processes.map((p) => p.peakResidentOnceMb))),
        processes,
      },
      postgres: {
        cpuSeconds:
          pgEnd !== null && this.pgStartCpu !== null ? round(pgEnd - this.pgStartCpu) : null,
        peakPssMb: this.pgPeakPss === null ? null : round(this.pgPeakPss),
      },
    };
  }

  private sample(): void {
    // One pass over /proc for every tree this sample reads (it was one per tree and reading).
    const table = processTable();
    for (const p of this.processes.values()) if (!p.retired) this.read(p, table);
    if (this.postmasterPid) {
      const pss = postgresPssMb(this.postmasterPid, table);
      if (pss !== null) this.pgPeakPss = Math.max(this.pgPeakPss ?? 0, pss);
    }
  }

  private read(p: Metered, table?: ProcessTable): void {
    const cpu = serviceTreeCpuSeconds(p.pid, table);
    if (cpu !== null) p.lastCpu = cpu;
    // The replica's own peak (VmHWM) is a floor for both: a peak between two samples.
    const ownPeak = peakRssMb(p.pid) ?? 0;
    p.peakRss = Math.max(p.peakRss, ownPeak, serviceTreeRssMb(p.pid, table) ?? 0);
    p.peakResidentOnce = Math.max(
      p.peakResidentOnce,
      ownPeak,
      serviceTreeResidentOnceMb(p.pid, table) ?? 0,
    );
  }
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
