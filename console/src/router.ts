import { useEffect, useState } from 'preact/hooks';

/**
 * Hash routes (`#/schedules/…`): the server serves one index.html and never needs to know the
 * console's pages.
 */
export type Route =
  | { page: 'schedules' }
  | { page: 'schedule-new' }
  | { page: 'schedule'; id: string }
  | { page: 'schedule-edit'; id: string }
  | { page: 'run'; id: string }
  | { page: 'targets' }
  | { page: 'usage' }
  | { page: 'tenants' };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const [first, id, action] = parts;
  if (first === 'schedules' && id === 'new') return { page: 'schedule-new' };
  if (first === 'schedules' && id && action === 'edit') return { page: 'schedule-edit', id };
  if (first === 'schedules' && id) return { page: 'schedule', id };
  if (first === 'runs' && id) return { page: 'run', id };
  if (first === 'targets') return { page: 'targets' };
  if (first === 'usage') return { page: 'usage' };
  if (first === 'tenants') return { page: 'tenants' };
  return { page: 'schedules' };
}

export const href = {
  schedules: () => '#/schedules',
  newSchedule: () => '#/schedules/new',
  schedule: (id: string) => `#/schedules/${encodeURIComponent(id)}`,
  editSchedule: (id: string) => `#/schedules/${encodeURIComponent(id)}/edit`,
  run: (id: string) => `#/runs/${encodeURIComponent(id)}`,
  targets: () => '#/targets',
  usage: () => '#/usage',
  tenants: () => '#/tenants',
};

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

export function navigate(to: string): void {
  location.hash = to;
}
