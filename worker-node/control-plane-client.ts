import type { JobSpec } from '../common/job-spec.js';
import type {
  AssignmentWire,
  JobFinish,
  JobReport,
  JobStart,
  RegisterNode,
} from '../common/node-protocol/index.js';
import type {
  CheckpointReport,
  ReportRecordResult,
  ReportRecordWire,
} from '../common/node-protocol/index.js';
import { NODE_PROTOCOL_HEADER, NODE_PROTOCOL_VERSION } from '../common/node-protocol/index.js';
import { renewalDue } from '../sdk/src/token-renewal.js';

/** The control plane answered with an error status; 4xx answers are final but one (`isFinalAnswer`). */
export class ControlPlaneError extends Error {
  override readonly name = 'ControlPlaneError';
  constructor(
    readonly status: number,
    message: string,
    /** The error code of the answer's body (common/errors.ts), when it had one. */
    readonly code: string | null = null,
    /** The answer's Retry-After, when it had one: the refusal is for now, not for good. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
  }
}

/**
 * Whether a failed request is the control plane's last word on it. A 4xx is, but for a request to
 * slow down (429: it will take the report later) and for a protocol version it does not accept yet:
 * a control plane older than this daemon (common/node-protocol/version.ts) takes the message once
 * it is upgraded. A report refused for either is kept in the outbox, not dropped.
 */
export function isFinalAnswer(err: unknown): boolean {
  return (
    err instanceof ControlPlaneError &&
    err.status < 500 &&
    err.status !== 429 &&
    err.code !== 'node_protocol_unsupported'
  );
}

function errorCodeOf(body: string): string | null {
  try {
    const code = (JSON.parse(body) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' ? code : null;
  } catch {
    return null;
  }
}

/** A crashed process's stderr may hold anything; the protocol's text fields refuse NUL. */
function sendableFinish<F extends { error?: string | null }>(finish: F): F {
  const { error } = finish;
  return {
    ...finish,
    error: error === null || error === undefined ? error : error.replaceAll('\u0000', '\ufffd'),
  };
}

/** An assignment as the node API sends it (common/node-protocol), with the spec typed. */
export type Assignment = Omit<AssignmentWire, 'spec'> & { spec: JobSpec };

/**
 * The delays between the tries of one request while the control plane is unreachable, answers 5xx
 * or asks it to slow down (~16 s in all); after the last the request fails (a report stays in the
 * outbox, report-outbox.ts, and is sent again later). `TIMESHARE_API_RETRY_MS` (config.ts).
 */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [200, 500, 1000, 2000, 4000, 8000];

/** How one request is tried: `onTry` as each try is sent; `delaysMs` instead of the client's. */
interface Tries {
  onTry?: () => void;
  delaysMs?: readonly number[];
}

/** The daemon's side of the node API: token exchange (refreshed before expiry), register, heartbeat. */
export interface DeviceReport {
  index: number;
  kind: string;
  memoryBytes: number;
  freeMemoryBytes: number;
  threads: number;
}

export class ControlPlaneClient {
  private token: string | null = null;
  private tokenExpiresAt = 0;

  constructor(
    private readonly baseUrl: string,
    private readonly nodeKey: string,
    private readonly retryDelaysMs: readonly number[] = DEFAULT_RETRY_DELAYS_MS,
  ) {}

  private async authHeader(): Promise<string> {
    // Renewed ahead of the expiry so a heartbeat never races it: a minute, or a third of the token's
    // lifetime when that is shorter (sdk/src/token-renewal.ts; a 30 s token was renewed every request).
    if (renewalDue({ token: this.token, expiresAt: this.tokenExpiresAt })) {
      const res = await this.send('POST', '/v1/auth/token', { apiKey: this.nodeKey }, null);
      this.token = res.token as string;
      this.tokenExpiresAt = new Date(res.expiresAt as string).getTime();
    }
    return `Bearer ${this.token}`;
  }

  /**
   * A request with the node's token. A token refused (401) is exchanged again once: the key may
   * still be good where the token is not (the API restarted with another signing secret, a clock
   * that ran ahead); a refused key is the control plane's last word.
   */
  private async authed(
    method: string,
    path: string,
    body: unknown,
    protocol?: number,
    tries?: Tries,
  ): Promise<Record<string, unknown>> {
    try {
      return await this.send(method, path, body, await this.authHeader(), protocol, tries);
    } catch (err) {
      if (!(err instanceof ControlPlaneError) || err.status !== 401) throw err;
      this.token = null;
      return this.send(method, path, body, await this.authHeader(), protocol, tries);
    }
  }

  /**
   * One request, retried with backoff while the control plane is unreachable, answers 5xx (an API
   * restart must not drop a checkpoint record or a job's outcome) or asks it to slow down (429,
   * after its `Retry-After`); other 4xx answers are final.
   */
  private async send(
    method: string,
    path: string,
    body: unknown,
    auth: string | null,
    protocol: number = NODE_PROTOCOL_VERSION,
    tries: Tries = {},
  ): Promise<Record<string, unknown>> {
    const delays = tries.delaysMs ?? this.retryDelaysMs;
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      tries.onTry?.();
      try {
        res = await fetch(`${this.baseUrl}${path}`, {
          method,
          headers: {
            'Content-Type': 'application/json',
            [NODE_PROTOCOL_HEADER]: String(protocol),
            ...(auth ? { Authorization: auth } : {}),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      } catch (err) {
        if (attempt >= delays.length) throw err;
        await new Promise((r) => setTimeout(r, delays[attempt]));
        continue;
      }
      if ((res.status >= 500 || res.status === 429) && attempt < delays.length) {
        const asked = Number(res.headers.get('retry-after'));
        await res.body?.cancel();
        const waitMs = Number.isFinite(asked) && asked > 0 ? Math.min(asked * 1000, 30_000) : 0;
        await new Promise((r) => setTimeout(r, Math.max(waitMs, delays[attempt]!)));
        continue;
      }
      if (!res.ok) {
        const text = await res.text();
        const retryAfter = Number(res.headers.get('retry-after') ?? NaN);
        throw new ControlPlaneError(
          res.status,
          `${method} ${path} → ${res.status}: ${text}`,
          errorCodeOf(text),
          Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : null,
        );
      }
      return res.status === 204 ? {} : ((await res.json()) as Record<string, unknown>);
    }
  }

  /**
   * Registers the node. A node an admin released answers 409 with Retry-After while the runs of its
   * old key are fenced (up to the node timeout after its last heartbeat): this waits them out.
   */
  async register(
    req: RegisterNode & { devices: DeviceReport[] },
    onWait: (err: ControlPlaneError) => void = () => undefined,
    onTry?: () => void,
  ): Promise<string> {
    for (;;) {
      try {
        const res = await this.authed('POST', '/v1/nodes/register', req, undefined, { onTry });
        return res.id as string;
      } catch (err) {
        if (!(err instanceof ControlPlaneError) || err.status !== 409 || err.retryAfterSeconds === null)
          throw err;
        onWait(err);
        await new Promise((r) => setTimeout(r, Math.max(200, err.retryAfterSeconds! * 1000)));
      }
    }
  }

  async assignments(nodeId: string): Promise<Assignment[]> {
    const res = await this.authed('GET', `/v1/nodes/${nodeId}/assignments`, undefined);
    return res.data as Assignment[];
  }

  // A job's reports go through the outbox (report-outbox.ts): `protocol` is the version the record
  // was written in, which an earlier daemon may have done.

  async jobStarted(nodeId: string, jobId: string, body: JobStart, protocol?: number): Promise<boolean> {
    const res = await this.authed('POST', `/v1/nodes/${nodeId}/jobs/${jobId}/start`, body, protocol);
    return res.applied === true;
  }

  async jobReport(nodeId: string, jobId: string, body: JobReport, protocol?: number): Promise<void> {
    const path = `/v1/nodes/${nodeId}/jobs/${jobId}/report`;
    await this.authed('POST', path, body, protocol);
  }

  async jobCheckpoint(
    nodeId: string,
    jobId: string,
    body: CheckpointReport,
    protocol?: number,
  ): Promise<void> {
    const path = `/v1/nodes/${nodeId}/jobs/${jobId}/checkpoints`;
    await this.authed('POST', path, body, protocol);
  }

  async jobFinished(nodeId: string, jobId: string, finish: JobFinish, protocol?: number): Promise<boolean> {
    const body = sendableFinish(finish);
    const res = await this.authed('POST', `/v1/nodes/${nodeId}/jobs/${jobId}/finish`, body, protocol);
    return res.applied === true;
  }

  /**
   * Several records in one request (common/node-protocol/report-batch.ts): one result per record,
   * in order. Each record names its own protocol version; the request names this daemon's.
   */
  async reportBatch(nodeId: string, records: ReportRecordWire[]): Promise<ReportRecordResult[]> {
    const body = {
      records: records.map((r) => (r.kind === 'finish' ? { ...r, body: sendableFinish(r.body) } : r)),
    };
    const res = await this.authed('POST', `/v1/nodes/${nodeId}/reports`, body);
    const results = res.results as ReportRecordResult[] | undefined;
    if (!Array.isArray(results) || results.length !== records.length)
      throw new Error(
        `POST /v1/nodes/${nodeId}/reports: ${results?.length} results for ${records.length} records`,
      );
    return results;
  }

  /** The daemon is shutting down: the scheduler places nothing more on this node. */
  async drain(nodeId: string): Promise<void> {
    await this.authed('POST', `/v1/nodes/${nodeId}/drain`, undefined);
  }

  /**
   * A heartbeat; resolves to when (performance.now()) the try the API accepted was sent: the API
   * recorded it after that, so the node's lease counts from there (supervision.ts). Retried while
   * the API is away, the first try's send would shorten the lease by the outage. `retryDelaysMs`:
   * the daemon's own, evenly spaced within a heartbeat period (the next heartbeat takes over), since
   * a try that waits out a backoff after the API is back may come after the job's deadline.
   */
  async heartbeat(
    nodeId: string,
    devices: { index: number; freeMemoryBytes: number }[],
    retryDelaysMs?: readonly number[],
  ): Promise<number> {
    let sentAt = performance.now();
    await this.authed('POST', `/v1/nodes/${nodeId}/heartbeat`, { devices }, undefined, {
      onTry: () => (sentAt = performance.now()),
      ...(retryDelaysMs ? { delaysMs: retryDelaysMs } : {}),
    });
    return sentAt;
  }
}
