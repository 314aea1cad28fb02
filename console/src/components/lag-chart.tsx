import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface LagPoint {
  /** the run's scheduled instant, ms */
  at: number;
  /** created − scheduled, seconds: how late the occurrence was dispatched */
  dispatched: number | null;
  /** finished − scheduled, seconds: how long until it ended */
  finished: number | null;
}

/** Lag over time (uPlot): dispatch lag and time to finish, per run, by scheduled instant. */
export function LagChart({ points }: { points: LagPoint[] }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!host.current || points.length === 0) return;
    const sorted = [...points].sort((a, b) => a.at - b.at);
    const data: uPlot.AlignedData = [
      sorted.map((p) => p.at / 1000),
      sorted.map((p) => p.dispatched),
      sorted.map((p) => p.finished),
    ];
    const chart = new uPlot(
      {
        width: Math.max(host.current.clientWidth, 320),
        height: 220,
        scales: { x: { time: true } },
        axes: [{}, { label: 'seconds after the instant', size: 60 }],
        series: [
          {},
          {
            label: 'dispatch lag (created − scheduled)',
            stroke: '#2563eb',
            width: 2,
            points: { show: true },
          },
          { label: 'finished − scheduled', stroke: '#16a34a', width: 2, points: { show: true } },
        ],
      },
      data,
      host.current,
    );
    return () => chart.destroy();
  }, [points]);
  if (points.length === 0) return <p class="muted">No runs to chart yet.</p>;
  return <div ref={host} class="chart" data-testid="lag-chart" />;
}
