/**
 * Weighted dominant-resource fairness per pool. A tenant's share is the larger of its device and
 * device-memory fractions of the pool (a time-shared device counts 1/n for each of its n jobs),
 * divided by its weight. Its entitlement is its weight's part of the pool among the tenants that
 * want something there, water-filled: what a tenant does not want is shared by the others.
 * A tenant above its entitlement is borrowing.
 */
import type { TenantState } from './types.js';

/**
 * At 1 (any shortfall) clearing nodes for starved tenants took the simulator's 16-node synthetic
 * pool, where every tenant already got ≥ 0.98 of its entitlement, from 192 to 1,070 notices a seed
 * for 3.6% fewer jobs/h; at 0.8 it gave 197 notices and the same jobs/h, and on 4 nodes the same
 * fairness as at 1 (docs/simulator.md, finding 13).
 */
export const STARVED_BELOW = 0.8;

export interface TenantPoolUsage {
  devices: number;
  memory: number;
  /** Devices its queued jobs want in this pool. */
  demand: number;
}

/** A tenant's usage with what the round asks of it most, found by one lookup. */
interface TenantRecord extends TenantPoolUsage {
  weight: number;
  entitlement: number;
  /** Its decayed past usage's part (`history`), NaN until first asked. */
  history: number;
}

export class FairShare {
  readonly usage = new Map<string, TenantRecord>();

  constructor(
    readonly pool: string,
    private readonly capacity: { devices: number; memory: number },
    private readonly tenants: ReadonlyMap<string, TenantState>,
  ) {}

  of(tenantId: string): TenantPoolUsage {
    return this.record(tenantId);
  }

  private record(tenantId: string): TenantRecord {
    let u = this.usage.get(tenantId);
    if (!u)
      this.usage.set(
        tenantId,
        (u = {
          devices: 0,
          memory: 0,
          demand: 0,
          weight: Math.max(1e-6, this.tenants.get(tenantId)?.weight ?? 1),
          entitlement: 0,
          history: NaN,
        }),
      );
    return u;
  }

  weight(tenantId: string): number {
    return this.record(tenantId).weight;
  }

  /** Dominant share / weight, with `extra` devices and memory added (negative: removed). */
  share(tenantId: string, extraDevices = 0, extraMemory = 0): number {
    const u = this.record(tenantId);
    return this.dominant(u, extraDevices, extraMemory) / u.weight;
  }

  /** Unweighted dominant fraction of the pool that these holdings make. */
  private dominant(u: TenantPoolUsage, extraDevices: number, extraMemory: number): number {
    const d = this.capacity.devices > 0 ? (u.devices + extraDevices) / this.capacity.devices : 0;
    const m = this.capacity.memory > 0 ? (u.memory + extraMemory) / this.capacity.memory : 0;
    return Math.max(0, d, m);
  }

  /** Decayed past usage as a fraction of all tenants' in this pool, over the weight. */
  private historyTotal: number | null = null;

  history(tenantId: string): number {
    const u = this.record(tenantId);
    if (!Number.isNaN(u.history)) return u.history;
    if (this.historyTotal === null) {
      this.historyTotal = 0;
      for (const t of this.tenants.values()) this.historyTotal += t.usage[this.pool]?.deviceSeconds ?? 0;
    }
    const total = this.historyTotal;
    u.history =
      total <= 0 ? 0 : (this.tenants.get(tenantId)?.usage[this.pool]?.deviceSeconds ?? 0) / total / u.weight;
    return u.history;
  }

  /** Computes entitlements from current usage plus demand (call once usage and demand are filled in). */
  settle(): void {
    const cap = Math.max(1, this.capacity.devices);
    const want = new Map<string, number>();
    for (const [id, u] of this.usage)
      if (u.devices + u.demand > 0) want.set(id, (u.devices + u.demand) / cap);
    const ent = new Map<string, number>();
    let left = 1;
    let open = [...want.keys()];
    // Water-filling: tenants that want less than their weighted part get what they want; the rest
    // split what remains by weight.
    while (open.length > 0 && left > 1e-12) {
      const w = open.reduce((s, id) => s + this.weight(id), 0);
      const satisfied = open.filter((id) => want.get(id)! <= (left * this.weight(id)) / w);
      if (satisfied.length === 0) {
        for (const id of open) ent.set(id, (left * this.weight(id)) / w);
        break;
      }
      for (const id of satisfied) {
        ent.set(id, want.get(id)!);
        left -= want.get(id)!;
      }
      open = open.filter((id) => !satisfied.includes(id));
    }
    for (const [id, u] of this.usage) u.entitlement = ent.get(id) ?? 0;
  }

  /** Entitled fraction of the pool (0..1, not divided by weight). */
  entitlement(tenantId: string): number {
    return this.usage.get(tenantId)?.entitlement ?? 0;
  }

  /** Unweighted dominant fraction of the pool held, with an optional change. */
  fraction(tenantId: string, extraDevices = 0, extraMemory = 0): number {
    const u = this.record(tenantId);
    // As share × weight, to the last bit: the rules compare it with entitlements.
    return (this.dominant(u, extraDevices, extraMemory) / u.weight) * u.weight;
  }

  /**
   * Holding well under its entitlement (less than `STARVED_BELOW` of it): such a tenant may have a
   * node cleared (reclaim-compact.ts), and its wide aged jobs preempt by its share before admission
   * (preempt.ts).
   */
  starved(tenantId: string): boolean {
    return this.fraction(tenantId) < STARVED_BELOW * this.entitlement(tenantId) - 1e-9;
  }

  borrowing(tenantId: string, extraDevices = 0, extraMemory = 0): boolean {
    return this.fraction(tenantId, extraDevices, extraMemory) > this.entitlement(tenantId) + 1e-9;
  }
}
