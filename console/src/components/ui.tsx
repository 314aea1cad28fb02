import type { ComponentChildren } from 'preact';
import { ApiError } from '../session';

export function ErrorBanner({ error }: { error: unknown }) {
  if (!error) return null;
  const message =
    error instanceof ApiError
      ? error.message
      : error instanceof Error
        ? `Could not reach the server: ${error.message}`
        : String(error);
  const [head, ...fields] = message.split('\n');
  return (
    <div class="error" role="alert">
      <strong>{head}</strong>
      {fields.length > 0 && (
        <ul>
          {fields.map((f) => (
            <li key={f}>{f.trim()}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function Card({
  title,
  actions,
  children,
}: {
  title?: string;
  actions?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <section class="card">
      {(title || actions) && (
        <header class="card-head">
          {title && <h2>{title}</h2>}
          {actions && <div class="actions">{actions}</div>}
        </header>
      )}
      {children}
    </section>
  );
}

/** A run state or schedule status as a coloured pill; SKIPPED and UNKNOWN each their own. */
export function Badge({ value, title }: { value: string; title?: string }) {
  return (
    <span class={`badge badge-${value.toLowerCase()}`} title={title}>
      {value}
    </span>
  );
}

export function Field({
  label,
  error,
  children,
  hint,
}: {
  label: string;
  error?: string;
  hint?: string;
  children: ComponentChildren;
}) {
  return (
    <label class={`field${error ? ' field-invalid' : ''}`}>
      <span class="field-label">{label}</span>
      {children}
      {hint && !error && <span class="field-hint">{hint}</span>}
      {error && <span class="field-error">{error}</span>}
    </label>
  );
}

export function Definition({ items }: { items: Array<[string, ComponentChildren]> }) {
  return (
    <dl class="definition">
      {items.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v === null || v === undefined || v === '' ? '–' : v}</dd>
        </div>
      ))}
    </dl>
  );
}

export function Loading() {
  return <p class="muted">Loading…</p>;
}
