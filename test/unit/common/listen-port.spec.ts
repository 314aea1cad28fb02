import { AddressInfo, createServer, Server } from 'node:net';
import { unusedListenPort } from '../../../src/common';

function hold(port: number): Promise<Server> {
  return new Promise((done, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => done(server));
  });
}

const close = (server: Server) => new Promise<void>((done) => server.close(() => done()));

describe('unusedListenPort', () => {
  it('chooses free ports below the ephemeral range outgoing connections are given', async () => {
    const ports = [];
    for (let i = 0; i < 20; i++) ports.push(await unusedListenPort(32_768));

    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(32_768);
      // Free: it can be bound right away.
      await close(await hold(port));
    }
    expect(new Set(ports).size).toBeGreaterThan(1);
  });

  it('skips a candidate another process holds', async () => {
    const taken = await hold(await unusedListenPort(32_768));
    const takenPort = (taken.address() as AddressInfo).port;
    try {
      // The first draw lands on the held port (the middle of its slot: its edge, times the span,
      // can round down to the port below); later ones are random.
      let draws = 0;
      const port = await unusedListenPort(32_768, () =>
        draws++ === 0 ? (takenPort - 20_000 + 0.5) / 12_768 : Math.random(),
      );

      expect(draws).toBeGreaterThanOrEqual(2);
      expect(port).not.toBe(takenPort);
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(32_768);
    } finally {
      await close(taken);
    }
  });

  it('takes the kernel’s choice when the ephemeral range leaves no room below it', async () => {
    const port = await unusedListenPort(10_000, () => {
      throw new Error('no candidate is drawn');
    });

    expect(port).toBeGreaterThan(0);
    await close(await hold(port));
  });
});
