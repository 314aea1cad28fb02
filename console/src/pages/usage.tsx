import type { Schemas } from '../../../src/client';
import { Card, Definition, ErrorBanner, Loading } from '../components/ui';
import { useInterval, useLoad } from '../data';
import { must, type Session } from '../session';
import { ago, formatUtc } from '../time';

type Usage = Schemas['UsageDto'];

/**
 * The tenant's usage (`GET /usage`): quotas against use, throttling (runs waiting by reason and
 * the oldest waiting age) and the busiest projected minutes. Figures are the server's, shown
 * as they come.
 */
export function UsagePage({ session }: { session: Session }) {
  const usage = useLoad(async () => must(await session.client.GET('/usage')), []);
  useInterval(usage.reload, 5000);
  const u = usage.data;
  return (
    <>
      <Card title="Usage">
        <ErrorBanner error={usage.error} />
        {!u && !usage.error && <Loading />}
        {u && <Definition items={quotaItems(u)} />}
      </Card>
      {u && (
        <div class="columns">
          <Card title="Throttling">
            <Definition
              items={[
                ['Waiting for a concurrency permit', u.waitingRuns.throttled_concurrency],
                ['Waiting for a rate token', u.waitingRuns.throttled_rate],
                ['Waiting for a worker slot', u.waitingRuns.throttled_fleet],
                [
                  'Oldest waiting',
                  u.oldestWaitingSeconds > 0 ? ago(u.oldestWaitingSeconds) : 'none waiting',
                ],
              ]}
            />
          </Card>
          <Card title="Busiest minutes, next 24 h">
            {u.busiestMinutes.length === 0 ? (
              <p class="muted">No runs projected.</p>
            ) : (
              <table class="grid" data-testid="busiest-minutes">
                <thead>
                  <tr>
                    <th>Minute (UTC)</th>
                    <th>Runs</th>
                    <th>Of the minute's allowance</th>
                  </tr>
                </thead>
                <tbody>
                  {u.busiestMinutes.map((m) => (
                    <tr key={m.minute}>
                      <td class="mono">{formatUtc(m.minute)}</td>
                      <td>{m.runs}</td>
                      <td>
                        <Meter used={m.runs} of={u.allowedRunsPerMinute} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </Card>
        </div>
      )}
    </>
  );
}

function quotaItems(u: Usage): Array<[string, preact.ComponentChildren]> {
  return [
    ['Active schedules', <Meter used={u.activeSchedules} of={u.quotas.maxActiveSchedules} />],
    ['Runs holding permits', <Meter used={u.runsHoldingPermits} of={u.quotas.maxConcurrentRuns} />],
    [
      'Dispatch rate',
      `${u.quotas.dispatchRatePerSecond} runs/s (${u.allowedRunsPerMinute} a minute)`,
    ],
    ['Fair-share weight', u.quotas.weight],
  ];
}

/** "120 of 10000" with a bar; the bar's width is an SVG attribute, not an inline style. */
function Meter({ used, of }: { used: number; of: number }) {
  const share = of > 0 ? Math.min(used / of, 1) : 0;
  return (
    <span class="meter">
      <svg viewBox="0 0 100 8" preserveAspectRatio="none" aria-hidden="true">
        <rect x="0" y="0" width="100" height="8" class="meter-track" />
        <rect
          x="0"
          y="0"
          width={share * 100}
          height="8"
          class={share >= 0.9 ? 'meter-fill meter-high' : 'meter-fill'}
        />
      </svg>
      <span>
        {used} of {of}
      </span>
    </span>
  );
}
