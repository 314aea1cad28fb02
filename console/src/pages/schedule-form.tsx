import { useEffect, useMemo, useState } from 'preact/hooks';
import type { Schemas } from '../../../src/client';
import { PreviewList, type Instant } from '../components/preview-list';
import { Card, ErrorBanner, Field, Loading } from '../components/ui';
import { useLoad } from '../data';
import { href, navigate } from '../router';
import { ApiError, must, type Session } from '../session';
import { timezones } from '../time';

type Schedule = Schemas['ScheduleDto'];
type Body = Schemas['CreateScheduleDto'];
type DstPolicy = NonNullable<Schemas['PreviewRequestDto']['dstPolicy']>;

interface Form {
  name: string;
  targetId: string;
  kind: 'cron' | 'once';
  cron: string;
  timezone: string;
  runAt: string;
  nonexistent: NonNullable<DstPolicy['nonexistent']>;
  repeated: NonNullable<DstPolicy['repeated']>;
  overlapPolicy: NonNullable<Body['overlapPolicy']>;
  missedRunPolicy: NonNullable<Body['missedRunPolicy']>;
  priority: NonNullable<Body['priority']>;
  payload: string;
}

const PREVIEW_COUNT = 12;
const PREVIEW_DEBOUNCE_MS = 250;

function initial(schedule?: Schedule): Form {
  return {
    name: schedule?.name ?? '',
    targetId: schedule?.targetId ?? '',
    kind: schedule && !schedule.cron ? 'once' : 'cron',
    cron: schedule?.cron ?? '0 9 * * *',
    timezone: schedule?.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC',
    runAt: schedule?.runAt ? toLocalInput(schedule.runAt) : '',
    nonexistent: schedule?.dstPolicy?.nonexistent ?? 'skip',
    repeated: schedule?.dstPolicy?.repeated ?? 'first',
    overlapPolicy: (schedule?.overlapPolicy as Form['overlapPolicy']) ?? 'skip',
    missedRunPolicy: (schedule?.missedRunPolicy as Form['missedRunPolicy']) ?? 'latest',
    priority: (schedule?.priority as Form['priority']) ?? 'normal',
    payload: JSON.stringify(schedule?.payload ?? {}, null, 2),
  };
}

/** An instant as a `datetime-local` value: the wall time in the browser's own zone. */
function toLocalInput(iso: string): string {
  const at = new Date(iso);
  return new Date(at.getTime() - at.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
}

/** Create or edit: the cron preview is asked of the server as you type (its rules, its DST). */
export function ScheduleFormPage({ session, id }: { session: Session; id?: string }) {
  const existing = useLoad(
    async () =>
      id ? must(await session.client.GET('/schedules/{id}', { params: { path: { id } } })) : null,
    [id],
  );
  const targets = useLoad(
    async () =>
      must(await session.client.GET('/targets', { params: { query: { limit: 100 } } })).items,
    [],
  );
  if (existing.error) return <ErrorBanner error={existing.error} />;
  if (existing.data === undefined || !targets.data) return <Loading />;
  return (
    <ScheduleForm session={session} schedule={existing.data ?? undefined} targets={targets.data} />
  );
}

function ScheduleForm({
  session,
  schedule,
  targets,
}: {
  session: Session;
  schedule?: Schedule;
  targets: Schemas['TargetDto'][];
}) {
  const [form, setForm] = useState<Form>(() => ({
    ...initial(schedule),
    targetId: schedule?.targetId ?? targets[0]?.id ?? '',
  }));
  const [preview, setPreview] = useState<{ items: Instant[]; error: unknown }>({
    items: [],
    error: null,
  });
  const [submitError, setSubmitError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const zones = useMemo(timezones, []);
  const set =
    <K extends keyof Form>(key: K) =>
    (event: Event) =>
      setForm((f) => ({ ...f, [key]: (event.target as HTMLInputElement).value }));

  useEffect(() => {
    if (form.kind !== 'cron') return;
    let live = true;
    const timer = setTimeout(async () => {
      const answer = await session.client.POST('/schedules/preview', {
        body: {
          cron: form.cron,
          timezone: form.timezone,
          count: PREVIEW_COUNT,
          dstPolicy: { nonexistent: form.nonexistent, repeated: form.repeated },
        },
      });
      if (!live) return;
      if (answer.data) setPreview({ items: answer.data.items, error: null });
      else setPreview({ items: [], error: new ApiError(answer.response.status, answer.error) });
    }, PREVIEW_DEBOUNCE_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [form.kind, form.cron, form.timezone, form.nonexistent, form.repeated]);

  const fieldErrors = {
    ...(preview.error instanceof ApiError ? preview.error.fieldErrors : {}),
    ...(submitError instanceof ApiError ? submitError.fieldErrors : {}),
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setSubmitError(null);
    try {
      let payload: Record<string, unknown>;
      try {
        payload = JSON.parse(form.payload || '{}') as Record<string, unknown>;
      } catch {
        throw new ApiError(400, {
          status: 400,
          title: 'Invalid payload',
          detail: 'the payload is not valid JSON',
          errors: [{ field: 'payload', message: 'must be a JSON object' }],
        });
      }
      const timing =
        form.kind === 'cron'
          ? {
              cron: form.cron,
              timezone: form.timezone,
              runAt: null,
              dstPolicy: { nonexistent: form.nonexistent, repeated: form.repeated },
            }
          : {
              runAt: form.runAt ? new Date(form.runAt).toISOString() : '',
              cron: null,
              timezone: null,
            };
      const body = {
        name: form.name,
        targetId: form.targetId,
        payload,
        overlapPolicy: form.overlapPolicy,
        missedRunPolicy: form.missedRunPolicy,
        priority: form.priority,
        ...timing,
      };
      const saved = schedule
        ? must(
            await session.client.PATCH('/schedules/{id}', {
              params: {
                path: { id: schedule.id },
                header: { 'If-Match': `"${schedule.revision}"` },
              },
              body,
            }),
          )
        : must(
            await session.client.POST('/schedules', {
              params: { header: { 'Idempotency-Key': crypto.randomUUID() } },
              // A create names only what it sets: no null for the timing it does not use.
              body: Object.fromEntries(Object.entries(body).filter(([, v]) => v !== null)) as Body,
            }),
          );
      navigate(href.schedule(saved.id));
    } catch (e) {
      setSubmitError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="columns">
      <Card title={schedule ? `Edit ${schedule.name}` : 'New schedule'}>
        <form class="form" onSubmit={submit} data-testid="schedule-form">
          <Field label="Name" error={fieldErrors.name}>
            <input name="name" required value={form.name} onInput={set('name')} />
          </Field>
          <Field
            label="Target"
            error={fieldErrors.targetId}
            hint={targets.length ? undefined : 'create a target first'}
          >
            <select name="targetId" value={form.targetId} onChange={set('targetId')}>
              {targets.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name} · {t.method} {t.url}
                </option>
              ))}
            </select>
          </Field>
          <fieldset class="roles">
            <label>
              <input
                type="radio"
                name="kind"
                checked={form.kind === 'cron'}
                onChange={() => setForm((f) => ({ ...f, kind: 'cron' }))}
              />{' '}
              Cron
            </label>
            <label>
              <input
                type="radio"
                name="kind"
                checked={form.kind === 'once'}
                onChange={() => setForm((f) => ({ ...f, kind: 'once' }))}
              />{' '}
              Once
            </label>
          </fieldset>
          {form.kind === 'cron' ? (
            <>
              <Field label="Cron (5 fields, or 6 with seconds first)" error={fieldErrors.cron}>
                <input name="cron" class="mono" value={form.cron} onInput={set('cron')} />
              </Field>
              <Field label="Time zone (IANA)" error={fieldErrors.timezone}>
                <input
                  name="timezone"
                  list="zones"
                  value={form.timezone}
                  onInput={set('timezone')}
                />
                <datalist id="zones">
                  {zones.map((z) => (
                    <option key={z} value={z} />
                  ))}
                </datalist>
              </Field>
              <div class="row">
                <Field label="Local time that does not exist (DST gap)">
                  <select name="nonexistent" value={form.nonexistent} onChange={set('nonexistent')}>
                    <option value="skip">skip it</option>
                    <option value="shift_forward">shift forward to the gap's end</option>
                  </select>
                </Field>
                <Field label="Local time that happens twice (DST fold)">
                  <select name="repeated" value={form.repeated} onChange={set('repeated')}>
                    <option value="first">first</option>
                    <option value="last">last</option>
                    <option value="both">both</option>
                  </select>
                </Field>
              </div>
            </>
          ) : (
            <Field label="Run at (your local time)" error={fieldErrors.runAt}>
              <input
                name="runAt"
                type="datetime-local"
                step="1"
                value={form.runAt}
                onInput={set('runAt')}
              />
            </Field>
          )}
          <div class="row">
            <Field label="Overlap">
              <select
                name="overlapPolicy"
                value={form.overlapPolicy}
                onChange={set('overlapPolicy')}
              >
                <option value="skip">skip</option>
                <option value="buffer_one">buffer one</option>
                <option value="allow">allow</option>
              </select>
            </Field>
            <Field label="Missed runs">
              <select
                name="missedRunPolicy"
                value={form.missedRunPolicy}
                onChange={set('missedRunPolicy')}
              >
                <option value="latest">latest</option>
                <option value="skip">skip</option>
                <option value="all">all</option>
              </select>
            </Field>
            <Field label="Priority">
              <select name="priority" value={form.priority} onChange={set('priority')}>
                <option value="high">high</option>
                <option value="normal">normal</option>
                <option value="low">low</option>
              </select>
            </Field>
          </div>
          <Field label="Payload (JSON object, at most 64 KiB)" error={fieldErrors.payload}>
            <textarea
              name="payload"
              class="mono"
              rows={5}
              value={form.payload}
              onInput={set('payload')}
            />
          </Field>
          <ErrorBanner error={submitError} />
          <div class="actions">
            <button type="submit" class="primary" disabled={busy}>
              {schedule ? 'Save' : 'Create schedule'}
            </button>
            <a class="button" href={schedule ? href.schedule(schedule.id) : href.schedules()}>
              Cancel
            </a>
          </div>
        </form>
      </Card>
      {form.kind === 'cron' && (
        <Card title="Next instants">
          <p class="muted">
            As the server computes them for <span class="mono">{form.cron}</span> in {form.timezone}
            , DST policy applied.
          </p>
          <ErrorBanner error={preview.error} />
          <PreviewList
            items={preview.items}
            timezone={preview.error ? null : form.timezone}
            policy={{ nonexistent: form.nonexistent, repeated: form.repeated }}
          />
        </Card>
      )}
    </div>
  );
}
