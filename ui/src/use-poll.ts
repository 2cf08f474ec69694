/**
 * Loads data now and again every `intervalMs` while the view is mounted (0: once). A failed load
 * keeps the last data and reports the error, and a 404 ends the polling; an answer that arrives
 * after unmount is dropped.
 */
import { useCallback, useEffect, useRef, useState } from 'react';

export interface Polled<T> {
  data: T | undefined;
  error: Error | undefined;
  reload: () => void;
}

export function usePoll<T>(load: () => Promise<T>, intervalMs: number, deps: readonly unknown[]): Polled<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<Error>();
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      try {
        const v = await loadRef.current();
        if (!live) return;
        setData(v);
        setError(undefined);
      } catch (err) {
        if (live) setError(err as Error);
        // Gone (404): asking again every few seconds changes nothing.
        if ((err as { status?: unknown }).status === 404) return;
      }
      if (live && intervalMs > 0) timer = setTimeout(run, intervalMs);
    };
    void run();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [intervalMs, tick, ...deps]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, reload };
}
