/**
 * Requests to the API under test. Every answer is checked for a 5xx: the API promises none while
 * it is up, so one is a violation unless the soak itself had just killed the API.
 */
import type { Violations } from './violations.js';

/** A parsed JSON body, read loosely: the soak checks the API, it does not re-type it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface Outage {
  from: number;
  /** null while the API is down */
  to: number | null;
}

/** When the soak had the API down (killed, until it answered /healthz again). */
export class ApiOutages {
  private readonly spans: Outage[] = [];

  begin(): Outage {
    const span: Outage = { from: Date.now(), to: null };
    this.spans.push(span);
    return span;
  }

  isDown(): boolean {
    return this.spans.some((d) => d.to === null);
  }

  /** Down, or back for under 500 ms: a request sent to the old process may still be answered 5xx. */
  excuses5xx(): boolean {
    return this.spans.some((d) => d.to === null || Date.now() - d.to < 500);
  }
}

export class ApiClient {
  constructor(
    readonly url: string,
    readonly outages: ApiOutages,
    private readonly violations: Violations,
  ) {}

  async call(
    method: string,
    route: string,
    token: string | null,
    body?: unknown,
  ): Promise<{ status: number; body: Json }> {
    const res = await fetch(this.url + route, {
      method,
      headers: {
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    let parsed: Json = text as unknown as Json;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    if (res.status >= 500 && !this.outages.excuses5xx())
      this.violations.violate('no_5xx', `${method} ${route} → ${res.status} ${text.slice(0, 300)}`);
    return { status: res.status, body: parsed };
  }
}
