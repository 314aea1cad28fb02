import { describeDstChange, dstChangesBetween, formatUtc } from '../time';
import type { Instant } from './preview-list';

/**
 * The next instants on a time axis, with each DST change between them drawn where it happens
 * (a gap in amber, a fold in violet): the shape of the schedule at a glance.
 */
export function UpcomingTimeline({
  items,
  timezone,
}: {
  items: Instant[];
  timezone: string | null;
}) {
  if (items.length < 2) return null;
  const times = items.map((i) => new Date(i.at).getTime());
  const min = times[0];
  const span = Math.max(times[times.length - 1] - min, 1);
  const width = 1000;
  const x = (t: number) => 8 + ((t - min) / span) * (width - 16);
  const changes = timezone
    ? dstChangesBetween(timezone, new Date(times[0]), new Date(times[times.length - 1]))
    : [];
  return (
    <div class="timeline" data-testid="upcoming-timeline">
      <svg
        viewBox={`0 0 ${width} 48`}
        preserveAspectRatio="none"
        role="img"
        aria-label="next instants"
      >
        <line x1="0" y1="24" x2={width} y2="24" class="axis" />
        {changes.map((c) => (
          <rect
            key={c.at.getTime()}
            x={x(c.at.getTime()) - 1.5}
            y="2"
            width="3"
            height="44"
            class={`dst-line dst-line-${c.kind}`}
          >
            <title>{describeDstChange(c)}</title>
          </rect>
        ))}
        {items.map((item, i) => (
          <rect
            key={item.at}
            x={x(times[i]) - 3}
            y="14"
            width="6"
            height="20"
            rx="2"
            class="mark mark-queued"
          >
            <title>{`${formatUtc(item.at)} · ${item.local}`}</title>
          </rect>
        ))}
      </svg>
      <div class="timeline-axis">
        <span>{formatUtc(items[0].at)}</span>
        <span>{formatUtc(items[items.length - 1].at)}</span>
      </div>
    </div>
  );
}
