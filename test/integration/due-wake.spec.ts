import { Client } from 'pg';
import { DUE_CHANNEL, WAKE_HORIZON_MS } from '../../src/due-index';
import { eventually } from '../support/eventually';
import { tenantWithTarget } from '../support/scheduling';
import { startTestApp, TestApp } from '../support/test-app';

describe('due-index wake-ups', () => {
  let t: TestApp;
  let listener: Client;
  const heard: string[] = [];

  beforeAll(async () => {
    t = await startTestApp({ ROLES: 'api' });
    listener = new Client({ connectionString: t.database.url });
    await listener.connect();
    listener.on('notification', (n) => heard.push(n.payload ?? ''));
    await listener.query(`LISTEN ${DUE_CHANNEL}`);
  });
  afterAll(async () => {
    await listener.end();
    await t.close();
  });

  it('wakes the pollers for an entry due within the horizon, not for one due later', async () => {
    const make = await tenantWithTarget(t);
    const later = new Date(Date.now() + WAKE_HORIZON_MS + 60_000);
    await make.createSchedule({ runAt: later.toISOString() });
    await make.createSchedule({ cron: '0 9 1 1 *', timezone: 'UTC' });
    await make.createSchedule({ runAt: new Date(Date.now() + 1500).toISOString() });
    // Notifications arrive in commit order: once the near one's is here, any earlier one is too.
    await eventually(() => expect(heard.length).toBeGreaterThanOrEqual(1));
    expect(heard).toEqual(['batch']);
  });
});
