import { spawn, type ChildProcess } from 'node:child_process';
import {
  privateMb,
  rssMb,
  serviceTreeResidentOnceMb,
  serviceTreeRssMb,
} from '../../../bench/proc-stats';

/** A node process that stays up until killed: it maps the same binary as this one. */
function idleNode(): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['-e', 'process.stdout.write("up"); setInterval(() => undefined, 1000)'],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    child.once('error', reject);
    child.stdout!.once('data', () => resolve(child));
  });
}

describe("a service tree's memory, shared pages counted once", () => {
  let child: ChildProcess | null = null;

  afterEach(() => {
    child?.kill('SIGKILL');
    child = null;
  });

  it("reads a process's private pages as part of its resident set", () => {
    const own = privateMb(process.pid);
    expect(own).not.toBeNull();
    expect(own!).toBeGreaterThan(0);
    expect(own!).toBeLessThanOrEqual(rssMb(process.pid)!);
  });

  it("counts a child node process's text once, where the plain sum counts it twice", async () => {
    child = await idleNode();
    const table = new Map([[process.pid, [child.pid!]]]);
    const summed = serviceTreeRssMb(process.pid, table)!;
    const once = serviceTreeResidentOnceMb(process.pid, table)!;
    const childRss = rssMb(child.pid!)!;
    const childPrivate = privateMb(child.pid!)!;
    // The child shares the node binary's text (tens of MB) with this process.
    expect(childRss - childPrivate).toBeGreaterThan(5);
    expect(once).toBeLessThan(summed - 5);
    // Nothing of the root's own resident set is left out.
    expect(once).toBeGreaterThanOrEqual(rssMb(process.pid)!);
  });

  it('is null for a process that is gone', () => {
    expect(serviceTreeResidentOnceMb(2 ** 22 + 7)).toBeNull();
    expect(privateMb(2 ** 22 + 7)).toBeNull();
  });
});
