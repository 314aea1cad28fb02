import { useMemo, useState } from 'preact/hooks';
import type { Schemas } from '../../../src/client';
import { Badge, Card, ErrorBanner, Loading } from '../components/ui';
import { useLoad } from '../data';
import { href } from '../router';
import { must, type Session } from '../session';
import { formatLocal, formatUtc } from '../time';

type Schedule = Schemas['ScheduleDto'];
type Status = Schedule['status'];
type Run = Schemas['RunDto'];

const STATUSES: Status[] = ['active', 'paused', 'cancelled', 'completed'];
/** Pages of a schedule's history read to find its latest run (runs come oldest first). */
const LAST_RUN_PAGES = 3;

/** Schedules: status filter (server side), search by name or label, next due and last run. */
export function SchedulesPage({ session }: { session: Session }) {
  const [status, setStatus] = useState<Status | ''>('');
  const [search, setSearch] = useState('');
  const [pages, setPages] = useState<string[]>([]);
  const { data, error } = useLoad(async () => {
    const items: Schedule[] = [];
    let cursor: string | undefined;
    let next: string | null = null;
    for (let i = 0; i <= pages.length; i++) {
      const page = must(
        await session.client.GET('/schedules', {
          params: { query: { status: status || undefined, cursor, limit: 50 } },
        }),
      );
      items.push(...page.items);
      next = page.nextCursor;
      if (!next) break;
      cursor = next;
    }
    return { items, next };
  }, [status, pages.length]);

  const shown = useMemo(() => {
    const needle = search.trim().toLowerCase();
    if (!data || !needle) return data?.items ?? [];
    return data.items.filter((s) => {
      const labels = labelsOf(s);
      return (
        s.name.toLowerCase().includes(needle) ||
        s.id.startsWith(needle) ||
        Object.entries(labels).some(([k, v]) => `${k}=${v}`.toLowerCase().includes(needle))
      );
    });
  }, [data, search]);
  const withLabels = (data?.items ?? []).some((s) => Object.keys(labelsOf(s)).length > 0);

  return (
    <Card
      title="Schedules"
      actions={
        <a class="button primary" href={href.newSchedule()}>
          New schedule
        </a>
      }
    >
      <div class="filters">
        <select
          aria-label="status"
          value={status}
          onChange={(e) => setStatus((e.target as HTMLSelectElement).value as Status | '')}
        >
          <option value="">any status</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
        <input
          type="search"
          placeholder="search name, id or label"
          aria-label="search"
          value={search}
          onInput={(e) => setSearch((e.target as HTMLInputElement).value)}
        />
      </div>
      <ErrorBanner error={error} />
      {!data && !error && <Loading />}
      {data && (
        <table class="grid" data-testid="schedules">
          <thead>
            <tr>
              <th>Name</th>
              <th>Status</th>
              {withLabels && <th>Labels</th>}
              <th>When</th>
              <th>Next due (UTC)</th>
              <th>Next due (local)</th>
              <th>Last run</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((s) => (
              <tr key={s.id}>
                <td>
                  <a href={href.schedule(s.id)}>{s.name}</a>
                </td>
                <td>
                  <Badge value={s.status} />
                </td>
                {withLabels && (
                  <td>
                    {Object.entries(labelsOf(s)).map(([k, v]) => (
                      <span class="label" key={k}>{`${k}=${v}`}</span>
                    ))}
                  </td>
                )}
                <td class="mono">{s.cron ? `${s.cron} · ${s.timezone}` : 'once'}</td>
                <td class="mono">{formatUtc(s.nextDueAt)}</td>
                <td class="mono">
                  {s.nextDueAt ? formatLocal(s.timezone ?? 'UTC', new Date(s.nextDueAt)) : '–'}
                </td>
                <td>
                  <LastRun session={session} scheduleId={s.id} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {data && shown.length === 0 && <p class="muted">No schedule matches.</p>}
      {data?.next && <button onClick={() => setPages((p) => [...p, data.next!])}>Load more</button>}
    </Card>
  );
}

/** Labels come with the labels work; until a schedule carries them there is nothing to show. */
function labelsOf(schedule: Schedule): Record<string, string> {
  const labels = (schedule as Schedule & { labels?: Record<string, string> }).labels;
  return labels && typeof labels === 'object' ? labels : {};
}

function LastRun({ session, scheduleId }: { session: Session; scheduleId: string }) {
  const { data } = useLoad(async () => {
    let cursor: string | undefined;
    let last: Run | null = null;
    for (let i = 0; i < LAST_RUN_PAGES; i++) {
      const page = must(
        await session.client.GET('/schedules/{id}/runs', {
          params: { path: { id: scheduleId }, query: { cursor, limit: 100 } },
        }),
      );
      last = page.items.at(-1) ?? last;
      if (!page.nextCursor) return { last, more: false };
      cursor = page.nextCursor;
    }
    return { last, more: true };
  }, [scheduleId]);
  if (!data) return <span class="muted">…</span>;
  if (data.more) return <a href={href.schedule(scheduleId)}>see runs</a>;
  if (!data.last) return <span class="muted">none</span>;
  return (
    <a href={href.run(data.last.id)}>
      <Badge value={data.last.state} title={data.last.reason ?? undefined} />
    </a>
  );
}
