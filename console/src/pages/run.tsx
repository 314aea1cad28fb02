import { useState } from 'preact/hooks';
import type { Schemas } from '../../../src/client';
import { Badge, Card, Definition, ErrorBanner, Loading } from '../components/ui';
import { useInterval, useLoad } from '../data';
import { href } from '../router';
import { must, type Session } from '../session';
import { formatUtc } from '../time';

type Attempt = Schemas['AttemptDto'] & {
  // Comes with the attempts' response capture; shown when the server sends it.
  response?: { status?: number; bodyExcerpt?: string | null } | null;
};

/** A run: its state and reason, and each attempt with its fencing token, timing and outcome. */
export function RunPage({ session, id }: { session: Session; id: string }) {
  const [actionError, setActionError] = useState<unknown>(null);
  const [inFlight, setInFlight] = useState<boolean | null>(null);
  const run = useLoad(
    async () => must(await session.client.GET('/runs/{id}', { params: { path: { id } } })),
    [id],
  );
  useInterval(run.reload, 1500);
  if (run.error) return <ErrorBanner error={run.error} />;
  const r = run.data;
  if (!r) return <Loading />;
  const open = ['QUEUED', 'RUNNING', 'RETRY_WAIT'].includes(r.state);
  const cancel = async () => {
    setActionError(null);
    try {
      setInFlight(
        must(await session.client.POST('/runs/{id}/cancel', { params: { path: { id } } })).inFlight,
      );
    } catch (e) {
      setActionError(e);
    }
    run.reload();
  };
  return (
    <>
      <Card
        title={`Run ${r.id}`}
        actions={
          open && (
            <button class="danger" onClick={cancel}>
              Cancel run
            </button>
          )
        }
      >
        <ErrorBanner error={actionError} />
        {inFlight && (
          <p class="notice">Cancelled; an attempt was in flight and may still have acted.</p>
        )}
        <Definition
          items={[
            ['State', <Badge value={r.state} title={r.reasonDetail ?? undefined} />],
            ['Reason', r.reason],
            ['Detail', r.reasonDetail],
            ['Schedule', <a href={href.schedule(r.scheduleId)}>{r.scheduleId}</a>],
            ['Scheduled', `${formatUtc(r.scheduledAt)} · ${r.scheduledLocal}`],
            ['Trigger', r.trigger],
            ['Attempts', `${r.attemptCount} of ${r.maxAttempts}`],
            ['Fencing token', r.fencingToken],
            ['Lease until', formatUtc(r.leaseUntil)],
            ['Next attempt', formatUtc(r.nextAttemptAt)],
            [
              'Estimated start',
              formatUtc((r as { estimatedStartAt?: string | null }).estimatedStartAt),
            ],
            ['Finished', formatUtc(r.finishedAt)],
          ]}
        />
      </Card>
      <Card title="Attempts">
        {r.attempts.length === 0 ? (
          <p class="muted">No attempt yet.</p>
        ) : (
          <table class="grid" data-testid="attempts">
            <thead>
              <tr>
                <th>#</th>
                <th>Fencing token</th>
                <th>Started</th>
                <th>Duration</th>
                <th>Outcome</th>
                <th>Target status</th>
                <th>Error</th>
                <th>Response</th>
              </tr>
            </thead>
            <tbody>
              {(r.attempts as Attempt[]).map((a) => (
                <tr key={a.attemptNo}>
                  <td>{a.attemptNo}</td>
                  <td>{a.fencingToken}</td>
                  <td class="mono">{formatUtc(a.startedAt)}</td>
                  <td>{a.durationMs === null ? '–' : `${a.durationMs} ms`}</td>
                  <td>{a.outcome ? <Badge value={a.outcome} /> : 'in flight'}</td>
                  <td>{a.httpStatus ?? '–'}</td>
                  <td class="wrap">{a.error ?? ''}</td>
                  <td class="wrap mono">{a.response?.bodyExcerpt ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
    </>
  );
}
