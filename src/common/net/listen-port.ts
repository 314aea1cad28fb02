import { readFile } from 'node:fs/promises';
import { AddressInfo, createServer } from 'node:net';

/** Where candidates are drawn from when the ephemeral range leaves room below it. */
const LOWEST_CANDIDATE = 20_000;
/** Random candidates probed before falling back to a port the kernel picks. */
const CANDIDATES_PROBED = 50;
/** Linux's default; macOS's starts higher (49152), so ports below it are outside both. */
const DEFAULT_EPHEMERAL_LOW = 32_768;

/**
 * A free port on 127.0.0.1 for a server that cannot be told "any free port" (the embedded
 * PostgreSQL; in tests, the processes they start), chosen below the kernel's ephemeral range. The
 * port is probed free here and bound by the server a moment later. A port the kernel picks is
 * from the ephemeral range, the one it also hands out as the local end of every outgoing
 * connection, and one of those can take it in that moment (PostgreSQL then exits with "could not
 * create any TCP/IP sockets", Node with EADDRINUSE). Below the range only another process binding
 * that very port on purpose can.
 */
export async function unusedListenPort(
  ephemeralLow: number | null = null,
  random: () => number = Math.random,
): Promise<number> {
  const low = ephemeralLow ?? (await ephemeralRangeStart());
  const span = low - LOWEST_CANDIDATE;
  if (span > 0) {
    for (let probe = 0; probe < CANDIDATES_PROBED; probe++) {
      const candidate = LOWEST_CANDIDATE + Math.floor(random() * span);
      if ((await bound(candidate)) !== null) return candidate;
    }
  }
  const picked = await bound(0);
  if (picked === null) throw new Error('no free TCP port on 127.0.0.1');
  return picked;
}

/** Binds the port (0: the kernel's choice) and releases it; null when it is taken. */
function bound(port: number): Promise<number | null> {
  return new Promise((done) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', () => done(null));
    probe.listen(port, '127.0.0.1', () => {
      const { port: chosen } = probe.address() as AddressInfo;
      probe.close(() => done(chosen));
    });
  });
}

async function ephemeralRangeStart(): Promise<number> {
  try {
    const [low] = (await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8'))
      .trim()
      .split(/\s+/)
      .map(Number);
    return Number.isInteger(low) && low > 0 ? low : DEFAULT_EPHEMERAL_LOW;
  } catch {
    return DEFAULT_EPHEMERAL_LOW;
  }
}
