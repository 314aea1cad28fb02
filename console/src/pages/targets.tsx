import { useState } from 'preact/hooks';
import type { Schemas } from '../../../src/client';
import { Card, ErrorBanner, Field, Loading } from '../components/ui';
import { useLoad } from '../data';
import { ApiError, must, type Session } from '../session';

type Method = NonNullable<Schemas['CreateTargetDto']['method']>;

/** Targets: the list (a secret shows only as "set") and a form to register one. */
export function TargetsPage({ session }: { session: Session }) {
  const targets = useLoad(
    async () =>
      must(await session.client.GET('/targets', { params: { query: { limit: 100 } } })).items,
    [],
  );
  return (
    <div class="columns">
      <Card title="Targets">
        <ErrorBanner error={targets.error} />
        {!targets.data && !targets.error && <Loading />}
        {targets.data && targets.data.length === 0 && <p class="muted">No target yet.</p>}
        {targets.data && targets.data.length > 0 && (
          <table class="grid" data-testid="targets">
            <thead>
              <tr>
                <th>Name</th>
                <th>Request</th>
                <th>Timeout</th>
                <th>Deduplicates</th>
                <th>Signing secret</th>
              </tr>
            </thead>
            <tbody>
              {targets.data.map((t) => (
                <tr key={t.id}>
                  <td>{t.name}</td>
                  <td class="mono">
                    {t.method} {t.url}
                  </td>
                  <td>{t.timeoutMs} ms</td>
                  <td>{t.deduplicates ? 'yes' : 'no'}</td>
                  <td>{t.hasSigningSecret ? 'set' : 'none'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
      <NewTarget session={session} onCreated={targets.reload} />
    </div>
  );
}

function NewTarget({ session, onCreated }: { session: Session; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [method, setMethod] = useState<Method>('POST');
  const [deduplicates, setDeduplicates] = useState(false);
  const [secret, setSecret] = useState('');
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      must(
        await session.client.POST('/targets', {
          body: { name, url, method, deduplicates, ...(secret ? { signingSecret: secret } : {}) },
        }),
      );
      setName('');
      setUrl('');
      setSecret('');
      onCreated();
    } catch (e) {
      setError(e);
    }
  };
  const fields = error instanceof ApiError ? error.fieldErrors : {};
  return (
    <Card title="New target">
      <form class="form" onSubmit={submit}>
        <Field label="Name" error={fields.name}>
          <input
            name="name"
            required
            value={name}
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
          />
        </Field>
        <Field label="URL" error={fields.url}>
          <input
            name="url"
            required
            value={url}
            onInput={(e) => setUrl((e.target as HTMLInputElement).value)}
          />
        </Field>
        <Field label="Method">
          <select
            name="method"
            value={method}
            onChange={(e) => setMethod((e.target as HTMLSelectElement).value as Method)}
          >
            {(['POST', 'PUT', 'PATCH', 'GET', 'DELETE'] as const).map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
        </Field>
        <label class="check">
          <input
            type="checkbox"
            checked={deduplicates}
            onChange={(e) => setDeduplicates((e.target as HTMLInputElement).checked)}
          />{' '}
          The target deduplicates on Idempotency-Key
        </label>
        <Field
          label="Signing secret (write-only)"
          error={fields.signingSecret}
          hint="never shown again"
        >
          <input
            name="signingSecret"
            type="password"
            autocomplete="off"
            value={secret}
            onInput={(e) => setSecret((e.target as HTMLInputElement).value)}
          />
        </Field>
        <ErrorBanner error={error} />
        <button type="submit" class="primary">
          Create target
        </button>
      </form>
    </Card>
  );
}
