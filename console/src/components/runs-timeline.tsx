import { href } from '../router';
import { formatUtc } from '../time';

export interface TimelineRun {
  id: string;
  scheduledAt: string;
  state: string;
  reason: string | null;
  reasonDetail: string | null;
}

/**
 * A schedule's runs on a time axis, one mark per run coloured by state (SKIPPED and UNKNOWN
 * have colours of their own); hovering a mark shows its instant, state and reason.
 */
export function RunsTimeline({ runs }: { runs: TimelineRun[] }) {
  if (!runs.length) return <p class="muted">No runs yet.</p>;
  const times = runs.map((r) => new Date(r.scheduledAt).getTime());
  const min = Math.min(...times);
  const max = Math.max(...times);
  const span = Math.max(max - min, 1);
  const width = 1000;
  return (
    <div class="timeline">
      <svg
        viewBox={`0 0 ${width} 48`}
        preserveAspectRatio="none"
        role="img"
        aria-label="runs by scheduled instant"
      >
        <line x1="0" y1="24" x2={width} y2="24" class="axis" />
        {runs.map((run, i) => {
          const x = runs.length === 1 ? width / 2 : 8 + ((times[i] - min) / span) * (width - 16);
          return (
            <a key={run.id} href={href.run(run.id)}>
              <rect
                x={x - 4}
                y="10"
                width="8"
                height="28"
                rx="2"
                class={`mark mark-${run.state.toLowerCase()}`}
                data-state={run.state}
              >
                <title>
                  {`${formatUtc(run.scheduledAt)} · ${run.state}${run.reason ? ` · ${run.reason}` : ''}${run.reasonDetail ? `: ${run.reasonDetail}` : ''}`}
                </title>
              </rect>
            </a>
          );
        })}
      </svg>
      <div class="timeline-axis">
        <span>{formatUtc(new Date(min).toISOString())}</span>
        <span>{formatUtc(new Date(max).toISOString())}</span>
      </div>
    </div>
  );
}
