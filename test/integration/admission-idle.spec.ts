import { AdmissionService } from '../../src/admission';
import { databaseRoundTrips } from '../../src/database';
import { ExecutionWorld, startExecutionWorld } from './execution.fixtures';

/**
 * The admitter runs a round every ADMISSION_INTERVAL_MS on every relay, whether or not a run
 * waits: a round that finds nothing to do must cost the database one statement. (The API role
 * alone, so no loop of this process makes round trips beside the ones counted.)
 */
describe('admission: a round with nothing to do', () => {
  let w: ExecutionWorld;

  beforeAll(async () => {
    w = await startExecutionWorld('api');
  });
  afterAll(() => w.close());

  it('is one round trip: no transaction around a start-deadline skip that finds nothing', async () => {
    const admission = w.t.app.get(AdmissionService);
    // The first round also counts the waiting lists for their metric (at most once a second).
    await admission.admitWaiting();
    const before = databaseRoundTrips();
    for (let i = 0; i < 5; i++) {
      expect(await admission.admitWaiting()).toEqual({ admitted: 0, tenantsWaiting: 0 });
    }
    // Before this change: BEGIN, the skip, COMMIT beside the look: four a round.
    expect(databaseRoundTrips() - before).toBe(5);
  });
});
