import { PollerService } from '../../src/poller';
import { RelayService } from '../../src/relay';
import { WorkerService } from '../../src/worker';
import { startTestApp } from '../support/test-app';

describe('ROLES composes the process', () => {
  it('starts only the listed roles and stops them cleanly', async () => {
    const t = await startTestApp({ ROLES: 'poller,worker' });
    try {
      const poller = t.app.get(PollerService);
      const worker = t.app.get(WorkerService);
      expect(poller.isRunning()).toBe(true);
      expect(worker.isRunning()).toBe(true);
      expect(() => t.app.get(RelayService)).toThrow();
      // No api role: the management routes and docs are not served, health and metrics are.
      expect((await t.http.post('/tenants').send({})).status).toBe(404);
      expect((await t.http.get('/docs-json')).status).toBe(404);
      expect((await t.http.get('/health/ready')).status).toBe(200);
      const metrics = (await t.http.get('/metrics')).text;
      expect(metrics).toContain('dueline_role_active{role="poller"} 1');
      await t.app.close();
      expect(poller.isRunning()).toBe(false);
      expect(worker.isRunning()).toBe(false);
    } finally {
      await t.close();
    }
  });
});
