import { useState } from 'preact/hooks';
import type { Schemas } from '../../../src/client';
import { LagChart, type LagPoint } from '../components/lag-chart';
import { PreviewList } from '../components/preview-list';
import { RunsTimeline } from '../components/runs-timeline';
import { UpcomingTimeline } from '../components/upcoming-timeline';
import { Badge, Card, Definition, ErrorBanner, Loading } from '../components/ui';
import { useInterval, useLoad } from '../data';
import { href } from '../router';
import { must, type Session } from '../session';
import { formatUtc } from '../time';

type Schedule = Schemas['ScheduleDto'];
type Run = Schemas['RunDto'];

const PREVIEW_COUNT = 20;
/** Runs shown: the newest of at most this many pages of history (runs come oldest first). */
const RUN_PAGES = 5;
const REFRESH_MS = 1500;

/** One schedule: definition, next instants, runs on a timeline, lag over time, actions. */
export function SchedulePage({ session, id }: { session: Session; id: string }) {
  const [actionError, setActionError] = useState<unknown>(null);
  const schedule = useLoad(
    async () => must(await session.client.GET('/schedules/{id}', { params: { path: { id } } })),
    [id],
  );
  const preview = useLoad(
    async () =>
      must(
        await session.client.GET('/schedules/{id}/preview', {
          params: { path: { id }, query: { count: PREVIEW_COUNT } },
        }),
      ).items,
    [id, schedule.data?.revision],
  );
  const runs = useLoad(async () => {
    const items: Run[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < RUN_PAGES; i++) {
      const page = must(
        await session.client.GET('/schedules/{id}/runs', {
          params: { path: { id }, query: { cursor, limit: 100 } },
        }),
      );
      items.push(...page.items);
      if (!page.nextCursor) return { items, more: false };
      cursor = page.nextCursor;
    }
    return { items, more: true };
  }, [id]);
  useInterval(runs.reload, REFRESH_MS);

  const act = async (action: () => Promise<unknown>) => {
    setActionError(null);
    try {
      await action();
    } catch (e) {
      setActionError(e);
    }
    schedule.reload();
    runs.reload();
  };

  if (schedule.error) return <ErrorBanner error={schedule.error} />;
  const s = schedule.data;
  if (!s) return <Loading />;
  const setStatus = (status: 'active' | 'paused') =>
    act(async () =>
      must(
        await session.client.PATCH('/schedules/{id}', {
          params: { path: { id }, header: { 'If-Match': `"${s.revision}"` } },
          body: { status },
        }),
      ),
    );
  const live = s.status === 'active' || s.status === 'paused';

  return (
    <>
      <Card
        title={s.name}
        actions={
          <>
            {s.status === 'active' && <button onClick={() => setStatus('paused')}>Pause</button>}
            {s.status === 'paused' && <button onClick={() => setStatus('active')}>Resume</button>}
            {live && (
              <button
                onClick={() =>
                  act(async () =>
                    must(
                      await session.client.POST('/schedules/{id}/trigger', {
                        params: { path: { id } },
                      }),
                    ),
                  )
                }
              >
                Trigger now
              </button>
            )}
            {live && (
              <a class="button" href={href.editSchedule(id)}>
                Edit
              </a>
            )}
            {live && (
              <button
                class="danger"
                onClick={() =>
                  confirm(`Cancel ${s.name} for good? Its history stays.`) &&
                  act(async () =>
                    must(
                      await session.client.DELETE('/schedules/{id}', {
                        params: { path: { id }, header: {} },
                      }),
                    ),
                  )
                }
              >
                Cancel schedule
              </button>
            )}
          </>
        }
      >
        <ErrorBanner error={actionError} />
        <Definition items={definition(s)} />
      </Card>
      <div class="columns">
        <Card title="Next instants">
          <ErrorBanner error={preview.error} />
          {preview.data ? (
            <>
              <UpcomingTimeline items={preview.data} timezone={s.timezone} />
              <PreviewList items={preview.data} timezone={s.timezone} policy={s.dstPolicy} />
            </>
          ) : (
            <Loading />
          )}
        </Card>
        <Card title="Runs">
          <ErrorBanner error={runs.error} />
          {runs.data ? <RunsCard runs={runs.data.items} more={runs.data.more} /> : <Loading />}
        </Card>
      </div>
      {runs.data && (
        <Card title="Lag over time">
          <LagChart points={lagPoints(runs.data.items)} />
        </Card>
      )}
    </>
  );
}

function RunsCard({ runs, more }: { runs: Run[]; more: boolean }) {
  const newest = [...runs].reverse();
  if (runs.length === 0) return <RunsTimeline runs={runs} />;
  return (
    <>
      <RunsTimeline runs={runs} />
      {more && <p class="muted">Showing the first {runs.length} runs.</p>}
      <table class="grid" data-testid="runs">
        <thead>
          <tr>
            <th>Scheduled (UTC)</th>
            <th>Local</th>
            <th>State</th>
            <th>Reason</th>
            <th>Attempts</th>
          </tr>
        </thead>
        <tbody>
          {newest.map((r) => (
            <tr key={r.id}>
              <td class="mono">
                <a href={href.run(r.id)}>{formatUtc(r.scheduledAt)}</a>
              </td>
              <td class="mono">{r.scheduledLocal}</td>
              <td>
                <Badge value={r.state} title={r.reasonDetail ?? r.reason ?? undefined} />
              </td>
              <td title={r.reasonDetail ?? undefined}>{r.reason ?? ''}</td>
              <td>
                {r.attemptCount}/{r.maxAttempts}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

function definition(s: Schedule): Array<[string, preact.ComponentChildren]> {
  return [
    ['Status', <Badge value={s.status} />],
    ['Revision', s.revision],
    [
      'Timing',
      s.cron ? <span class="mono">{`${s.cron} · ${s.timezone}`}</span> : formatUtc(s.runAt),
    ],
    [
      'DST policy',
      s.dstPolicy
        ? `nonexistent: ${s.dstPolicy.nonexistent}, repeated: ${s.dstPolicy.repeated}`
        : null,
    ],
    ['Next due', formatUtc(s.nextDueAt)],
    ['Target', s.targetId],
    ['Overlap', s.overlapPolicy],
    ['Missed runs', `${s.missedRunPolicy} (catch up at most ${s.maxCatchUp})`],
    ['Priority', s.priority],
    ['Start deadline', s.startDeadlineSeconds ? `${s.startDeadlineSeconds} s` : null],
    [
      'Retries',
      `${s.retryPolicy.maxAttempts ?? '–'} attempts, ${s.retryPolicy.initialDelayMs ?? '–'}–${s.retryPolicy.maxDelayMs ?? '–'} ms backoff`,
    ],
    ['Window', s.startAt || s.endAt ? `${formatUtc(s.startAt)} → ${formatUtc(s.endAt)}` : null],
    ['Payload', <code>{JSON.stringify(s.payload)}</code>],
  ];
}

function lagPoints(runs: Run[]): LagPoint[] {
  return runs.map((r) => {
    const at = new Date(r.scheduledAt).getTime();
    return {
      at,
      dispatched: (new Date(r.createdAt).getTime() - at) / 1000,
      finished: r.finishedAt ? (new Date(r.finishedAt).getTime() - at) / 1000 : null,
    };
  });
}
