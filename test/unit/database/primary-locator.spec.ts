import {
  NoWritableHostError,
  parseDatabaseUrl,
  PrimaryLocator,
  type HostPort,
} from '../../../src/database';

type Result = 'writable' | 'read-only' | 'unreachable';

/** A formation whose servers' answers the test sets, and whose probes it counts. */
function formation(hosts: string, answers: Record<string, Result | Promise<Result>>) {
  const asked: string[] = [];
  const keeping: boolean[] = [];
  const probe = {
    ask: (host: HostPort) => {
      asked.push(host.host);
      return Promise.resolve(answers[host.host]);
    },
    keepConnections: (keep: boolean) => keeping.push(keep),
  };
  const locator = new PrimaryLocator(parseDatabaseUrl(`postgres://u@${hosts}/db`), probe, {
    checkIntervalMs: 60_000,
  });
  return { locator, asked, answers, keeping };
}

describe('PrimaryLocator', () => {
  it('takes the first writable host in URL order, as libpq does', async () => {
    const { locator } = formation('a,b,c', { a: 'read-only', b: 'writable', c: 'writable' });
    await expect(locator.locate()).resolves.toEqual({ host: 'b', port: 5432 });
  });

  it('waits for an earlier host rather than taking a later one that answered first', async () => {
    let answerA!: (r: Result) => void;
    const { locator } = formation('a,b', {
      a: new Promise<Result>((resolve) => (answerA = resolve)),
      b: 'writable',
    });
    const located = locator.locate();
    answerA('writable');
    await expect(located).resolves.toEqual({ host: 'a', port: 5432 });
  });

  it('refuses to hand out a read-only formation', async () => {
    const { locator } = formation('a,b', { a: 'read-only', b: 'unreachable' });
    await expect(locator.locate()).rejects.toThrow(NoWritableHostError);
    await expect(locator.locate()).rejects.toThrow(/a:5432 \(read-only\), b:5432 \(unreachable\)/);
  });

  it('remembers the primary, shares one search between callers, and looks again once told', async () => {
    const { locator, asked, answers } = formation('a,b', { a: 'writable', b: 'read-only' });
    await Promise.all([locator.locate(), locator.locate(), locator.locate()]);
    await locator.locate();
    expect(asked).toEqual(['a', 'b']);

    answers.a = 'unreachable';
    answers.b = 'writable';
    locator.forget({ host: 'a', port: 5432 });
    await expect(locator.locate()).resolves.toEqual({ host: 'b', port: 5432 });
    // Forgetting a server that is not the one in use changes nothing.
    locator.forget({ host: 'a', port: 5432 });
    await locator.locate();
    expect(asked).toEqual(['a', 'b', 'a', 'b']);
  });

  it('cuts the connections to a primary that stopped taking writes, and only those', async () => {
    const { locator, answers } = formation('a,b', { a: 'writable', b: 'read-only' });
    const a = await locator.locate();
    const cut: string[] = [];
    locator.track(a, { destroy: (reason) => cut.push(`a1: ${reason.message}`) });
    const untrack = locator.track(a, { destroy: () => cut.push('a2') });
    untrack(); // closed on its own before the check
    locator.track({ host: 'b', port: 5432 }, { destroy: () => cut.push('b1') });

    await locator.check();
    expect(cut).toEqual([]);

    answers.a = 'read-only'; // demoted
    await locator.check();
    expect(cut).toEqual([
      'a1: a:5432 is no longer the writable server (read-only); connection closed',
    ]);
    expect(locator.known()).toBeNull();

    answers.b = 'writable';
    await expect(locator.locate()).resolves.toEqual({ host: 'b', port: 5432 });
  });

  it('cuts lingering connections to the other servers once a new primary is located', async () => {
    const { locator, answers } = formation('a,b', { a: 'writable', b: 'read-only' });
    const a = await locator.locate();
    const cut: string[] = [];
    locator.track(a, { destroy: () => cut.push('a') });
    answers.a = 'unreachable';
    answers.b = 'writable';
    locator.forget(a);
    await locator.locate();
    expect(cut).toEqual(['a']);
  });

  it('has its probe keep a connection only while it checks the server in use', async () => {
    const { locator, keeping } = formation('a', { a: 'writable' });
    await locator.locate();
    expect(keeping).toEqual([]);
    locator.start();
    expect(keeping).toEqual([true]);
    locator.stop();
    expect(keeping).toEqual([true, false]);
  });
});
