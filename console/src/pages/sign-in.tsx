import { useState } from 'preact/hooks';
import { ErrorBanner } from '../components/ui';
import { ApiError, type Role, type Session, saveSession, clearSession } from '../session';

const PROBE_TENANT = '00000000-0000-4000-8000-000000000000';

/**
 * Sign-in with a tenant API key (or the admin token). The key is checked with one real call
 * before it is kept: a tenant key must list schedules, the admin token must be let into /tenants.
 */
export function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [token, setToken] = useState('');
  const [role, setRole] = useState<Role>('tenant');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const session = saveSession(token.trim(), role);
    try {
      const answer =
        role === 'tenant'
          ? await session.client.GET('/schedules', { params: { query: { limit: 1 } } })
          : await session.client.GET('/tenants/{id}', { params: { path: { id: PROBE_TENANT } } });
      // For the admin token a 404 for a tenant that does not exist means it was let in.
      const accepted = answer.response.ok || (role === 'admin' && answer.response.status === 404);
      if (!accepted) throw new ApiError(answer.response.status, answer.error);
      onSignedIn(session);
    } catch (e) {
      clearSession();
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="sign-in">
      <form class="card" onSubmit={submit}>
        <h1>dueline</h1>
        <p class="muted">Sign in with your tenant's API key. It is kept in this tab only.</p>
        <fieldset class="roles">
          <label>
            <input
              type="radio"
              name="role"
              checked={role === 'tenant'}
              onChange={() => setRole('tenant')}
            />{' '}
            Tenant API key
          </label>
          <label>
            <input
              type="radio"
              name="role"
              checked={role === 'admin'}
              onChange={() => setRole('admin')}
            />{' '}
            Admin token
          </label>
        </fieldset>
        <label class="field">
          <span class="field-label">{role === 'tenant' ? 'API key' : 'Admin token'}</span>
          <input
            name="token"
            type="password"
            autocomplete="off"
            required
            value={token}
            onInput={(e) => setToken((e.target as HTMLInputElement).value)}
          />
        </label>
        <ErrorBanner error={error} />
        <button type="submit" class="primary" disabled={busy || !token.trim()}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
