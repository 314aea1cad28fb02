import { useCallback, useEffect, useState } from 'preact/hooks';

/** Loads on mount and on `reload()`; keeps the last error to show. */
export function useLoad<T>(
  load: () => Promise<T>,
  deps: unknown[],
): {
  data: T | undefined;
  error: unknown;
  reload: () => void;
} {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (value) => live && (setData(value), setError(null)),
      (e: unknown) => live && setError(e),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, reload };
}

/** Calls `tick` every `ms` while the page is shown (live run states). */
export function useInterval(tick: () => void, ms: number): void {
  useEffect(() => {
    const timer = setInterval(tick, ms);
    return () => clearInterval(timer);
  }, [tick, ms]);
}
