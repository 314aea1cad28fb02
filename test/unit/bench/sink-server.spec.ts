import { request } from 'node:http';
import type { Server } from 'node:http';
import { startSinkServer, type Receipt } from '../../../bench/sink-server';

interface Answer {
  status: number;
  body: string;
  /** When the answer's headers came back, epoch ms. */
  answeredAt: number;
}

function post(port: number, path: string, headers: Record<string, string>, body: string) {
  return new Promise<Answer>((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: 'POST', headers, agent: false },
      (res) => {
        const answeredAt = performance.timeOrigin + performance.now();
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, answeredAt }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('the bench sink server', () => {
  const receipts: Receipt[] = [];
  const malformed: number[] = [];
  let server: Server;
  let port: number;

  beforeAll(async () => {
    ({ server, port } = await startSinkServer({
      receipt: (r) => receipts.push(r),
      malformed: (at) => malformed.push(at),
    }));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    receipts.length = 0;
    malformed.length = 0;
  });

  const identity = {
    'content-type': 'application/json',
    'x-dueline-run-id': 'run-1',
    'x-dueline-attempt': '2',
    'x-dueline-scheduled-at': '2026-12-07T10:00:00.000Z',
  };

  it('stamps a run when it arrives and reads its identity from the contract', async () => {
    const sentAt = performance.timeOrigin + performance.now();
    const answer = await post(port, '/hook/ours', identity, JSON.stringify({ scheduleId: 's-1' }));
    expect(answer).toMatchObject({ status: 200, body: '{}' });
    expect(receipts).toEqual([
      {
        system: 'ours',
        runId: 'run-1',
        attempt: 2,
        scheduleId: 's-1',
        scheduledAt: Date.parse('2026-12-07T10:00:00.000Z'),
        receivedAt: expect.any(Number),
      },
    ]);
    expect(receipts[0].receivedAt).toBeGreaterThanOrEqual(sentAt);
    expect(receipts[0].receivedAt).toBeLessThanOrEqual(answer.answeredAt);
    expect(malformed).toEqual([]);
  });

  it('answers a slow URL that much later, stamped when it arrived', async () => {
    const answer = await post(
      port,
      '/hook/bullmq/slow/150',
      identity,
      JSON.stringify({ scheduleId: 's-2' }),
    );
    expect(answer.status).toBe(200);
    expect(receipts.map((r) => r.system)).toEqual(['bullmq']);
    expect(answer.answeredAt - receipts[0].receivedAt).toBeGreaterThanOrEqual(140);
  });

  it('counts what is not a run as malformed, with when it came', async () => {
    const sentAt = performance.timeOrigin + performance.now();
    await post(port, '/hook/ours', identity, 'not json');
    await post(port, '/hook/ours', { 'content-type': 'application/json' }, '{"scheduleId":"s"}');
    expect(receipts).toEqual([]);
    expect(malformed).toHaveLength(2);
    expect(malformed[0]).toBeGreaterThanOrEqual(sentAt);
  });
});
