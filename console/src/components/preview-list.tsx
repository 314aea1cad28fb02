import { Fragment } from 'preact';
import { describeDstChange, dstChangesBetween, formatUtc } from '../time';

export interface Instant {
  at: string;
  local: string;
}

/**
 * The next instants of a schedule, UTC and local, with each DST change between two of them
 * marked where it happens (a gap: local times that do not exist; a fold: times that repeat).
 */
export function PreviewList({
  items,
  timezone,
  policy,
}: {
  items: Instant[];
  timezone: string | null;
  policy?: { nonexistent?: string; repeated?: string } | null;
}) {
  if (!items.length) return <p class="muted">No upcoming instants.</p>;
  return (
    <ol class="preview" data-testid="preview">
      {items.map((item, i) => {
        const previous = items[i - 1];
        const changes =
          timezone && previous
            ? dstChangesBetween(timezone, new Date(previous.at), new Date(item.at))
            : [];
        return (
          <Fragment key={item.at}>
            {changes.map((change) => (
              <li key={change.at.getTime()} class={`dst dst-${change.kind}`} data-dst={change.kind}>
                {describeDstChange(change)}
                {change.kind === 'gap' && policy && ` · policy: ${policy.nonexistent ?? 'skip'}`}
                {change.kind === 'fold' && policy && ` · policy: ${policy.repeated ?? 'first'}`}
              </li>
            ))}
            <li class="instant">
              <span class="utc">{formatUtc(item.at)}</span>
              <span class="local">{item.local}</span>
            </li>
          </Fragment>
        );
      })}
    </ol>
  );
}
