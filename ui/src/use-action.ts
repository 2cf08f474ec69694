/**
 * One mutating action of a view (create, save, revoke…): `busy` while the API answers (its button
 * spins and cannot be pressed twice), then `error`, the refusal, until the next try. `run` resolves
 * to whether it was done, so that a form is cleared only once the API took it.
 */
import { useCallback, useState } from 'react';

export interface Action {
  busy: boolean;
  error: Error | null;
  run: (fn: () => Promise<unknown>) => Promise<boolean>;
  clear: () => void;
}

export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const run = useCallback(async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
      return true;
    } catch (err) {
      setError(err instanceof Error ? err : new Error(String(err)));
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  const clear = useCallback(() => setError(null), []);
  return { busy, error, run, clear };
}
