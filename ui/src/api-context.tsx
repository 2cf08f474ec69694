/** The logged-in session and its SDK client, for every view. */
import { createContext, useContext } from 'react';
import type { TimeshareClient } from '../../sdk/src/index.js';
import type { Session } from './session.js';

export interface ApiContextValue {
  session: Session;
  client: TimeshareClient;
}

export const ApiContext = createContext<ApiContextValue | null>(null);

export function useApi(): ApiContextValue {
  const v = useContext(ApiContext);
  if (!v) throw new Error('useApi outside ApiContext');
  return v;
}
