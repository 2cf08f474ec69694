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

  private async send(
    method: string,
    path: string,
    body: unknown,
    auth: string | null,
  ): Promise<Record<string, unknown>> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json', ...(auth ? { Authorization: auth } : {}) },
      body: JSON.stringify(body),
    });
    if (!res.ok) {
      const text = await res.text();
      throw new Error(`${method} ${path} → ${res.status}: ${text}`);
    }
    return res.status === 204 ? {} : ((await res.json()) as Record<string, unknown>);
  }

  async register(req: {
    name: string;
    pool: string;
    deviceType: string;
    devices: DeviceReport[];
  }): Promise<string> {
    const res = await this.send('POST', '/v1/nodes/register', req, await this.authHeader());
    return res.id as string;
  }

  async heartbeat(nodeId: string, devices: { index: number; freeMemoryBytes: number }[]): Promise<void> {
    await this.send('POST', `/v1/nodes/${nodeId}/heartbeat`, { devices }, await this.authHeader());
  }
}
