import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time and memory of processes, read from /proc (Linux only). CPU comes from
 * /proc/<pid>/stat (utime, stime, and for Postgres's postmaster also cutime/cstime, the time of
 * backends it has already reaped, so short-lived connections are not missed); memory from
 * /proc/<pid>/status (VmHWM, the peak resident set) and /proc/<pid>/smaps_rollup (PSS, which
 * splits shared buffers fairly between Postgres processes instead of counting them N times).
 */

const CLOCK_TICKS = readClockTicks();

function readClockTicks(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

export interface CpuTimes {
  /** utime + stime of the process itself, seconds. */
  self: number;
  /** cutime + cstime: reaped children, seconds. */
  children: number;
  ppid: number;
}

export function cpuTimes(pid: number): CpuTimes | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces; everything after its closing paren is fixed.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state): utime is field 14, i.e. fields[11].
    const ticks = (i: number) => Number(fields[i]);
    return {
      self: (ticks(11) + ticks(12)) / CLOCK_TICKS,
      children: (ticks(13) + ticks(14)) / CLOCK_TICKS,
      ppid: Number(fields[1]),
    };
  } catch {
    return null; // the process is gone
  }
}

/** Peak resident set (VmHWM) in MiB, or null when the process is gone. */
export function peakRssMb(pid: number): number | null {
  return statusField(pid, 'VmHWM');
}

export function rssMb(pid: number): number | null {
  return statusField(pid, 'VmRSS');
}

function statusField(pid: number, name: string): number | null {
  return kbFieldsMb(`/proc/${pid}/status`, [name]);
}

/**
 * The sum of `names`, fields of the "Name:   123 kB" form in a /proc file, in MiB; null when the
 * process is gone or a field is missing.
 */
function kbFieldsMb(path: string, names: readonly string[]): number | null {
  try {
    const text = readFileSync(path, 'utf8');
    let kb = 0;
    for (const name of names) {
      const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text);
      if (!match) return null;
      kb += Number(match[1]);
    }
    return kb / 1024;
  } catch {
    return null;
  }
}

/** Proportional set size in MiB (shared pages divided among the processes sharing them). */
export function pssMb(pid: number): number | null {
  return kbFieldsMb(`/proc/${pid}/smaps_rollup`, ['Pss']);
}

/**
 * Private resident memory in MiB (Private_Clean + Private_Dirty of smaps_rollup): the pages only
 * this process maps, which a process beside it does not share.
 */
export function privateMb(pid: number): number | null {
  return kbFieldsMb(`/proc/${pid}/smaps_rollup`, ['Private_Clean', 'Private_Dirty']);
}

/** Each process's direct children, by parent pid. */
export type ProcessTable = ReadonlyMap<number, readonly number[]>;

/** The machine's processes as a ProcessTable: one pass over /proc (ms with ~100 processes). */
export function processTable(): ProcessTable {
  const table = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = cpuTimes(Number(entry))?.ppid;
    if (parent === undefined) continue;
    const children = table.get(parent);
    if (children) children.push(Number(entry));
    else table.set(parent, [Number(entry)]);
  }
  return table;
}

/**
 * Direct children of a process (Postgres backends and auxiliary processes of a postmaster), from
 * `table` when the caller read one for several lookups, else from a pass of its own.
 */
export function childrenOf(
  parent: number,
  table: ProcessTable = processTable(),
): readonly number[] {
  return table.get(parent) ?? [];
}

/**
 * Total CPU seconds ever spent by a postmaster and its backends: its own time, its reaped
 * children's, and the live children's. Differences of two readings are the work in between.
 */
export function postgresCpuSeconds(postmaster: number): number | null {
  const root = cpuTimes(postmaster);
  if (!root) return null;
  let total = root.self + root.children;
  for (const pid of childrenOf(postmaster)) total += cpuTimes(pid)?.self ?? 0;
  return total;
}

/**
 * CPU seconds a service replica and its worker processes (WORKER_PROCESSES children) have spent:
 * its own, its reaped children's and the live children's, so a pool is metered whole.
 */
export function serviceTreeCpuSeconds(root: number, table?: ProcessTable): number | null {
  const times = cpuTimes(root);
  if (!times) return null;
  let total = times.self + times.children;
  for (const pid of childrenOf(root, table)) total += cpuTimes(pid)?.self ?? 0;
  return total;
}

/** Resident set of a replica and its live worker processes now, MiB. */
export function serviceTreeRssMb(root: number, table?: ProcessTable): number | null {
  return replicaPlusChildrenMb(root, rssMb, table);
}

/**
 * Resident memory of a replica and its live worker processes now, MiB, with the pages they share
 * counted once: the replica's whole resident set and each child's private pages. A worker
 * process runs the same node binary and libraries as its replica, whose ~50 MB of text a plain
 * sum of resident sets (serviceTreeRssMb) counts once per process. A child's pages shared with
 * some other process only (none are expected) would be left out.
 */
export function serviceTreeResidentOnceMb(root: number, table?: ProcessTable): number | null {
  return replicaPlusChildrenMb(root, privateMb, table);
}

/** A replica's resident set plus `ofChild` of each of its live children, MiB. */
function replicaPlusChildrenMb(
  root: number,
  ofChild: (pid: number) => number | null,
  table?: ProcessTable,
): number | null {
  const own = rssMb(root);
  if (own === null) return null;
  return childrenOf(root, table).reduce((sum, pid) => sum + (ofChild(pid) ?? 0), own);
}

/** Sum of PSS over a postmaster and its children, MiB. */
export function postgresPssMb(postmaster: number, table?: ProcessTable): number | null {
  const root = pssMb(postmaster);
  if (root === null) return null;
  let total = root;
  for (const pid of childrenOf(postmaster, table)) total += pssMb(pid) ?? 0;
  return total;
}

/** CPU seconds the whole machine has been busy (all cores; /proc/stat minus idle and iowait). */
export function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const [user, nice, system, , , irq, softirq, steal] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return (user + nice + system + irq + softirq + (steal || 0)) / CLOCK_TICKS;
}
