/**
 * The device lock as the simulator plays it: a job acquires all its devices at once, in arrival
 * order per device (a request waits behind any earlier request that shares a device with it, so
 * wide jobs are never starved), and each change of holder costs a switch: the resident job's
 * state goes out (offload) and the new holder's comes in (onload), each at the offload/onload
 * bandwidth, on every device in parallel. A job that takes its own device back finds its state
 * still resident and pays nothing, so a device nobody shares never switches.
 */

export interface LockRequest {
  jobId: string;
  nodeId: string;
  devices: readonly number[];
  bytesPerDevice: number;
  /** Called when the devices are the job's, with the seconds the switch takes first. */
  grant: (switchSeconds: number) => void;
}

interface Device {
  holder: string | null;
  resident: { jobId: string; bytes: number } | null;
}

export class DeviceLocks {
  private readonly devices = new Map<string, Device>();
  private readonly waiting = new Map<string, LockRequest[]>();

  constructor(private readonly bytesPerSecond: number) {}

  private dev(nodeId: string, index: number): Device {
    const key = `${nodeId}/${index}`;
    let d = this.devices.get(key);
    if (!d) this.devices.set(key, (d = { holder: null, resident: null }));
    return d;
  }

  request(r: LockRequest): void {
    const q = this.waiting.get(r.nodeId) ?? [];
    this.waiting.set(r.nodeId, q);
    q.push(r);
    this.grantWaiting(r.nodeId);
  }

  release(jobId: string, nodeId: string, devices: readonly number[]): void {
    for (const i of devices) {
      const d = this.dev(nodeId, i);
      if (d.holder === jobId) d.holder = null;
    }
    this.grantWaiting(nodeId);
  }

  /** Drops the job's waiting request (a notice came while it waited); its resident state stays. */
  cancel(jobId: string, nodeId: string): void {
    const q = this.waiting.get(nodeId);
    if (q)
      this.waiting.set(
        nodeId,
        q.filter((r) => r.jobId !== jobId),
      );
    this.grantWaiting(nodeId);
  }

  /** The job leaves the node: its requests are dropped and its resident state is freed (no offload). */
  evict(jobId: string, nodeId: string, devices: readonly number[]): void {
    const q = this.waiting.get(nodeId);
    if (q)
      this.waiting.set(
        nodeId,
        q.filter((r) => r.jobId !== jobId),
      );
    for (const i of devices) {
      const d = this.dev(nodeId, i);
      if (d.holder === jobId) d.holder = null;
      if (d.resident?.jobId === jobId) d.resident = null;
    }
    this.grantWaiting(nodeId);
  }

  holderOf(nodeId: string, index: number): string | null {
    return this.dev(nodeId, index).holder;
  }

  private grantWaiting(nodeId: string): void {
    const q = this.waiting.get(nodeId);
    if (!q || q.length === 0) return;
    const blocked = new Set<number>();
    const left: LockRequest[] = [];
    const granted: { r: LockRequest; seconds: number }[] = [];
    for (const r of q) {
      const free = r.devices.every((i) => !blocked.has(i) && this.dev(nodeId, i).holder === null);
      if (!free) {
        for (const i of r.devices) blocked.add(i);
        left.push(r);
        continue;
      }
      let seconds = 0;
      for (const i of r.devices) {
        const d = this.dev(nodeId, i);
        d.holder = r.jobId;
        if (d.resident?.jobId !== r.jobId) {
          const out = d.resident?.bytes ?? 0;
          seconds = Math.max(seconds, (out + r.bytesPerDevice) / this.bytesPerSecond);
          d.resident = { jobId: r.jobId, bytes: r.bytesPerDevice };
        }
      }
      granted.push({ r, seconds });
    }
    this.waiting.set(nodeId, left);
    for (const g of granted) g.r.grant(g.seconds);
  }
}
