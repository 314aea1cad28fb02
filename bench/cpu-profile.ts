/**
 * Where a service process spent a stretch of time, from a V8 CPU profile (`--cpu-prof`). The
 * profile's clock is the system's monotonic clock in microseconds, the one `process.hrtime`
 * reads, so a window the harness takes with `monotonicMicros()` cuts it exactly: the judged
 * window of a steady run, without the start-up and warm-up around it.
 */

/** The parts of a `.cpuprofile` this reads. */
export interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
  }>;
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface TimeShare {
  name: string;
  ms: number;
  /** Of the busy time (idle left out). */
  share: number;
}

export interface CpuProfileSummary {
  /** Sampled time inside the window, ms. */
  sampledMs: number;
  idleMs: number;
  /**
   * Self time by where the code lives: a package, a Node.js module, a module of this service
   * (`src/<module>`), or native work named by V8 (garbage collection, socket writes).
   */
  byPlace: TimeShare[];
  byFunction: TimeShare[];
}

/**
 * Native frames of socket writes. A profile samples wall time: a process the kernel switches
 * away from inside a write (to the process it woke, on a busy host) is sampled there too, so
 * their time is not all CPU.
 */
export const SOCKET_WRITES = new Set(['writev', 'writeBuffer', 'writeUtf8String']);

/** The system's monotonic clock in microseconds (the clock of a V8 CPU profile). */
export function monotonicMicros(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/**
 * The `--window FROM-TO` that cuts a service's profiles to an epoch-ms window (the judged one),
 * on the profiles' monotonic clock.
 */
export function profileWindowArgument(window: { from: number; to: number }): string {
  const toMonotonic = (epochMs: number) =>
    Math.round(monotonicMicros() - (Date.now() - epochMs) * 1000);
  return `--window ${toMonotonic(window.from)}-${toMonotonic(window.to)}`;
}

/**
 * Self time inside `window` (the whole profile without one): each sample is charged the time
 * since the one before it, as DevTools does; the `top` rows of each ranking.
 */
export function summarizeCpuProfile(
  profile: CpuProfile,
  window: { fromUs: number; toUs: number } | null = null,
  top = 20,
): CpuProfileSummary {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const selfUs = new Map<number, number>();
  let at = profile.startTime;
  profile.samples.forEach((nodeId, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (window && (at < window.fromUs || at > window.toUs)) return;
    selfUs.set(nodeId, (selfUs.get(nodeId) ?? 0) + delta);
  });
  const byPlace = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let sampledUs = 0;
  let idleUs = 0;
  for (const [nodeId, us] of selfUs) {
    const frame = frames.get(nodeId);
    if (!frame) continue;
    sampledUs += us;
    if (frame.functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    const place = placeOf(frame.url, frame.functionName);
    byPlace.set(place, (byPlace.get(place) ?? 0) + us);
    const fn = frame.url
      ? `${frame.functionName || '(anonymous)'} ${fileOf(frame.url)}:${frame.lineNumber + 1}`
      : place;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  }
  const busyUs = sampledUs - idleUs;
  const ranked = (totals: Map<string, number>): TimeShare[] =>
    [...totals]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, ms: us / 1000, share: busyUs > 0 ? us / busyUs : 0 }));
  return {
    sampledMs: sampledUs / 1000,
    idleMs: idleUs / 1000,
    byPlace: ranked(byPlace),
    byFunction: ranked(byFunction),
  };
}

/** `pg`, `@nestjs/core`, `node:net`, `src/worker`, or `(native: writev)`. */
export function placeOf(url: string, functionName: string): string {
  if (url === '') return `(native: ${functionName})`;
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  // A dot directory there is a build's output (the bench's own, node_modules/.cache), no package.
  if (inPackage && !inPackage[1].startsWith('.')) return inPackage[1];
  if (url.startsWith('node:')) return url.startsWith('node:internal/') ? 'node:internal' : url;
  const ours = /\/src\/([^/]+)\//.exec(url);
  if (ours) return `src/${ours[1]}`;
  return url.split('/').slice(-2).join('/');
}

/** The end of a script's path: its directory and file (`worker/run-executor.js`). */
function fileOf(url: string): string {
  return url.split('/').slice(-2).join('/');
}
