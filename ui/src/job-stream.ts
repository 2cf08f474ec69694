/**
 * A job's live event stream (GET /v1/jobs/{id}/events as text/event-stream) through the SDK, so it
 * carries the bearer token that EventSource cannot send. The stream ends after the job's final
 * event; a dropped connection, or one the server ended before it (its token expired), is resumed
 * from the last event id (`Last-Event-ID`).
 */
import { useEffect, useState } from 'react';
import { createParser } from 'eventsource-parser';
import type { JobEvent, TimeshareClient } from '../../sdk/src/index.js';
import { finalStatuses } from './format.js';

const RETRY_MS = 2_000;

export async function followJobEvents(
  client: TimeshareClient,
  jobId: string,
  onEvent: (e: JobEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  let lastId: string | undefined;
  let ended = false;
  while (!signal.aborted && !ended) {
    try {
      const { data, response } = await client.GET('/v1/jobs/{id}/events', {
        params: { path: { id: jobId }, query: {} },
        headers: { Accept: 'text/event-stream', ...(lastId ? { 'Last-Event-ID': lastId } : {}) },
        parseAs: 'stream',
        signal,
      });
      // A 4xx will not change by asking again (the job is not this tenant's, or not at all).
      if (response.status >= 400 && response.status < 500 && response.status !== 429) return;
      if (!response.ok || !data) throw new Error(`event stream: HTTP ${response.status}`);
      let received = false;
      const parser = createParser({
        onEvent: (m) => {
          if (m.id) lastId = m.id;
          const e = JSON.parse(m.data) as JobEvent;
          received = true;
          if (finalStatuses.has(statusOf(e) ?? '')) ended = true;
          onEvent(e);
        },
      });
      const reader = data.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(value);
      }
      // The server ends the stream after the job's final event, and when the token it was opened
      // with expires: then it is resumed at once with the session's fresh token (after a pause if
      // nothing came, so that an odd clean end never loops fast).
      if (!ended && !received) await new Promise((r) => setTimeout(r, RETRY_MS));
    } catch (err) {
      if (signal.aborted) return;
      console.warn('event stream interrupted, resuming', err);
      await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  }
}

/** The events of a job as they come (all of them, from the first); `null` id: none. */
export function useJobEvents(client: TimeshareClient, jobId: string | null): JobEvent[] {
  const [events, setEvents] = useState<JobEvent[]>([]);
  useEffect(() => {
    setEvents([]);
    if (!jobId) return;
    const abort = new AbortController();
    void followJobEvents(client, jobId, (e) => setEvents((prev) => [...prev, e]), abort.signal);
    return () => abort.abort();
  }, [client, jobId]);
  return events;
}

/** The status an event moved the job to, if it did. */
export const statusOf = (e: JobEvent): string | undefined =>
  typeof e.data.status === 'string' ? e.data.status : undefined;
