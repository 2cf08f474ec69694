import type { JobSpec } from '../common/job-spec.js';
import type {
  AssignmentWire,
  JobFinish,
  JobReport,
  JobStart,
  RegisterNode,
} from '../common/node-protocol/index.js';
import type { CheckpointReport } from '../common/node-protocol/index.js';

/** The control plane answered with an error status; 4xx answers are final. */
export class ControlPlaneError extends Error {
  override readonly name = 'ControlPlaneError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** An assignment as the node API sends it (common/node-protocol), with the spec typed. */
export type Assignment = Omit<AssignmentWire, 'spec'> & { spec: JobSpec };

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
  ) {}

  private async authHeader(): Promise<string> {
    // Refresh a minute early so a heartbeat never races the expiry.
    if (!this.token || Date.now() > this.tokenExpiresAt - 60_000) {
      const res = await this.send('POST', '/v1/auth/token', { apiKey: this.nodeKey }, null);
      this.token = res.token as string;
      this.tokenExpiresAt = new Date(res.expiresAt as string).getTime();
    }
    return `Bearer ${this.token}`;
  }

  /**
   * One request, retried with backoff while the control plane is unreachable or answers 5xx (an API
   * restart must not drop a checkpoint record or a job's outcome); 4xx answers are final.
   */
  private async send(
    method: string,
    path: string,
    body: unknown,
    auth: string | null,
  ): Promise<Record<string, unknown>> {
    const delays = [200, 500, 1000, 2000, 4000, 8000];
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(`${this.baseUrl}${path}`, {
          method,
          headers: { 'Content-Type': 'application/json', ...(auth ? { Authorization: auth } : {}) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      } catch (err) {
        if (attempt >= delays.length) throw err;
        await new Promise((r) => setTimeout(r, delays[attempt]));
        continue;
      }
      if (res.status >= 500 && attempt < delays.length) {
        await res.body?.cancel();
        await new Promise((r) => setTimeout(r, delays[attempt]));
        continue;
      }
      if (!res.ok)
        throw new ControlPlaneError(res.status, `${method} ${path} → ${res.status}: ${await res.text()}`);
      return res.status === 204 ? {} : ((await res.json()) as Record<string, unknown>);
    }
  }

  async register(req: RegisterNode & { devices: DeviceReport[] }): Promise<string> {
    const res = await this.send('POST', '/v1/nodes/register', req, await this.authHeader());
    return res.id as string;
  }

  async assignments(nodeId: string): Promise<Assignment[]> {
    const res = await this.send('GET', `/v1/nodes/${nodeId}/assignments`, undefined, await this.authHeader());
    return res.data as Assignment[];
  }

  async jobStarted(nodeId: string, jobId: string, body: JobStart): Promise<boolean> {
    const res = await this.send(
      'POST',
      `/v1/nodes/${nodeId}/jobs/${jobId}/start`,
      body,
      await this.authHeader(),
    );
    return res.applied === true;
  }

  async jobReport(nodeId: string, jobId: string, body: JobReport): Promise<void> {
    await this.send('POST', `/v1/nodes/${nodeId}/jobs/${jobId}/report`, body, await this.authHeader());
  }

  async jobCheckpoint(nodeId: string, jobId: string, body: CheckpointReport): Promise<void> {
    await this.send('POST', `/v1/nodes/${nodeId}/jobs/${jobId}/checkpoints`, body, await this.authHeader());
  }

  async jobFinished(nodeId: string, jobId: string, finish: JobFinish): Promise<boolean> {
    // A crashed process's stderr may hold anything; the protocol's text fields refuse NUL.
    const { error } = finish;
    const body: JobFinish = {
      ...finish,
      error: error === null ? null : error.replaceAll('\u0000', '\ufffd'),
    };
    const res = await this.send(
      'POST',
      `/v1/nodes/${nodeId}/jobs/${jobId}/finish`,
      body,
      await this.authHeader(),
    );
    return res.applied === true;
  }

  /** The daemon is shutting down: the scheduler places nothing more on this node. */
  async drain(nodeId: string): Promise<void> {
    await this.send('POST', `/v1/nodes/${nodeId}/drain`, undefined, await this.authHeader());
  }

  async heartbeat(nodeId: string, devices: { index: number; freeMemoryBytes: number }[]): Promise<void> {
    await this.send('POST', `/v1/nodes/${nodeId}/heartbeat`, { devices }, await this.authHeader());
  }
}
