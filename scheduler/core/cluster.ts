/**
 * The round's working model of one pool's devices: who sits on each device, and the rules a
 * time-share group must keep. Mutated as the round places jobs; never shared between rounds.
 *
 * A device's load is the share of its time its jobs want: each job's busy fraction, plus, once two
 * or more jobs share the device, each one's switch cost (onload + offload per step) over its step
 * time. A group is admitted when the load stays within `maxGroupLoad` (above 1 the device is
 * saturated and its jobs slow down in proportion: the idle time of one fills with the work of
 * another), the switches stay within `maxSwitchFraction` of device time, every job's working set
 * fits the device on its own (they take turns), and the node's host memory holds every job's
 * offloaded state.
 */
import { OrderedNodes } from './open-order.js';
import { SeqTree } from './seq-tree.js';
import type { JobPlan, NodeState, Policy } from './types.js';

export interface Occupant {
  jobId: string;
  tenantId: string;
  plan: JobPlan;
}

export interface Slot {
  node: NodeState;
  index: number;
  memoryBytes: number;
  threads: number;
  occupants: Occupant[];
  /** Sums over the occupants of busy fractions and switch fractions (kept with `occupants`). */
  busy: number;
  switching: number;
  /**
   * Held for a job that is changing plan in place and comes back to it, or on a node an admin
   * cordoned (for good, until uncordoned): nobody joins, claims or is placed on it.
   */
  held?: boolean;
}

export const switchFraction = (p: JobPlan) => p.switchSeconds / Math.max(p.stepSeconds, 1e-9);

/** Load of a device holding these jobs (see the header). */
export function deviceLoad(plans: readonly JobPlan[]): number {
  if (plans.length === 0) return 0;
  if (plans.length === 1) return plans[0]!.busyFraction;
  let load = 0;
  for (const p of plans) load += p.busyFraction + switchFraction(p);
  return load;
}

/** Share of device time that goes to switches for this group. */
export function groupSwitchShare(plans: readonly JobPlan[]): number {
  if (plans.length < 2) return 0;
  let s = 0;
  for (const p of plans) s += switchFraction(p);
  return s / Math.max(1, deviceLoad(plans));
}

/**
 * Whether a device whose other jobs have these plans may take one more (the jobs-per-device, load
 * and switch bounds of the header; memory is the caller's): the one rule for the round's model and
 * for re-planning a running job on its own devices.
 */
export function groupAdmits(policy: Policy, others: readonly JobPlan[], plan: JobPlan): boolean {
  if (others.length === 0) return true;
  if (others.length === 1) return pairAdmits(policy, others[0]!, plan);
  if (!policy.timeSharing || others.length + 1 > policy.maxJobsPerDevice) return false;
  const plans = [...others, plan];
  return deviceLoad(plans) <= policy.maxGroupLoad && groupSwitchShare(plans) <= policy.maxSwitchFraction;
}

/** `groupAdmits` for a device holding one job, without building the group (the estimate asks often). */
export function pairAdmits(policy: Policy, host: JobPlan, plan: JobPlan): boolean {
  if (!policy.timeSharing || policy.maxJobsPerDevice < 2) return false;
  // Summed in the order deviceLoad and groupSwitchShare sum (two new jobs on the prior sit exactly
  // on the default bound, so the order of the additions decides).
  const a = switchFraction(host);
  const b = switchFraction(plan);
  const load = host.busyFraction + a + (plan.busyFraction + b);
  return load <= policy.maxGroupLoad && (a + b) / Math.max(1, load) <= policy.maxSwitchFraction;
}

function sameWidths(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
  return true;
}

/** The list of `width` in `lists`, made when first wanted. */
function ordered(lists: Map<number, OrderedNodes>, width: number): OrderedNodes {
  let list = lists.get(width);
  if (!list) lists.set(width, (list = new OrderedNodes()));
  return list;
}

/** The slots of these devices, in the order asked. */
function pick(all: readonly Slot[], devices: readonly number[]): Slot[] {
  const out: Slot[] = [];
  for (const i of devices) {
    // Slots are in device order, and devices are usually numbered 0…n−1.
    const slot = all[i]?.index === i ? all[i] : all.find((s) => s.index === i);
    if (slot) out.push(slot);
  }
  return out;
}

/** The same string for the same set of jobs, whatever their order on the device. */
function occupantsKey(occupants: readonly Occupant[]): string {
  if (occupants.length === 1) return occupants[0]!.jobId;
  if (occupants.length === 2) {
    const [a, b] = [occupants[0]!.jobId, occupants[1]!.jobId];
    return a < b ? `${a}\n${b}` : `${b}\n${a}`;
  }
  return occupants
    .map((o) => o.jobId)
    .sort()
    .join('\n');
}

/** What the round keeps of one node, found by one lookup. */
interface NodeRecord {
  id: string;
  slots: Slot[];
  hostMemoryBytes: number;
  /** Its place in the pool's order (the order of `slots`). */
  rank: number;
  hostUsed: number;
  /** Devices without an occupant (its bucket in `byFree`), −1 before the first count. */
  free: number;
  /** Whether it is in `openNodes`, and when it last became open: the order `openNodes` iterates in. */
  open: boolean;
  openSeq: number;
  /** Its whole groups, worked out when first asked for after a change. */
  groups: { groups: Slot[][]; widths: Set<number> } | null;
  /**
   * Where `joinable` lists it: the widths, the open sequence they were listed with, and for each
   * width the load (busy + switch shares summed over its devices) of its least-loaded group there,
   * and the lowest over its groups there of their busiest device's load.
   */
  listed: { seq: number; widths: number[]; loads: number[]; peaks: number[] } | null;
  /** The widths and loads under which `byLoad` holds it (a `listed` of a moment before). */
  byLoadAs: { widths: number[]; loads: number[] } | null;
}

export class PoolModel {
  readonly slots = new Map<string, Slot[]>();
  private readonly records = new Map<string, NodeRecord>();
  /** Nodes by their count of free devices, for best-fit exclusive placement without a scan. */
  private readonly byFree: Set<NodeRecord>[] = [];
  readonly totalDevices: number;
  readonly totalMemory: number;
  /** `someNodeHolds` by devices, then bytes a device: nodes do not change within a round. */
  private readonly holdsByShape = new Map<number, Map<number, boolean>>();
  /** The same, for nodes that are not cordoned. */
  private readonly openHoldsByShape = new Map<number, Map<number, boolean>>();
  /** Whether any node of the pool is cordoned (most rounds: none, and nothing is asked twice). */
  readonly anyCordoned: boolean;

  constructor(
    readonly pool: string,
    readonly nodes: NodeState[],
    private readonly policy: Policy,
  ) {
    let devices = 0;
    let memory = 0;
    for (const n of nodes) {
      const slots = [...n.devices]
        .sort((a, b) => a.index - b.index)
        .map((d) => ({
          node: n,
          index: d.index,
          memoryBytes: d.memoryBytes,
          threads: d.threads,
          occupants: [],
          busy: 0,
          switching: 0,
          // A cordoned node's devices take nothing new: every rule that places, joins, claims,
          // moves or grows onto a device already passes over held ones.
          ...(n.cordoned ? { held: true } : {}),
        }));
      const rec: NodeRecord = {
        id: n.id,
        slots,
        hostMemoryBytes: n.hostMemoryBytes,
        rank: this.records.size,
        hostUsed: 0,
        free: -1,
        open: false,
        openSeq: -1,
        groups: null,
        listed: null,
        byLoadAs: null,
      };
      this.slots.set(n.id, slots);
      this.records.set(n.id, rec);
      this.setFree(rec, n.devices.length);
      devices += n.devices.length;
      for (const d of n.devices) memory += d.memoryBytes;
    }
    this.totalDevices = devices;
    this.totalMemory = memory;
    this.anyCordoned = nodes.some((n) => n.cordoned);
  }

  /** Whether an admin cordoned the node (none of its devices takes anything new). */
  cordoned(nodeId: string): boolean {
    return this.anyCordoned && this.records.get(nodeId)?.slots[0]?.node.cordoned === true;
  }

  /**
   * The pool's devices and device memory that fair shares are fractions of: a cordoned node's
   * devices only while a job runs on them (its tenant's share counts them). Counted whole, a
   * cordoned empty node made every tenant's entitlement larger than what could be placed, and a
   * tenant holding all the rest was not borrowing.
   */
  shareCapacity(): { devices: number; memory: number } {
    let devices = this.totalDevices;
    let memory = this.totalMemory;
    if (this.anyCordoned)
      for (const rec of this.records.values())
        for (const s of rec.slots)
          if (s.node.cordoned && s.occupants.length === 0) {
            devices--;
            memory -= s.memoryBytes;
          }
    return { devices, memory };
  }

  /** A node's place in the pool's order (the order of `slots`), for ties broken as a scan would. */
  rank(nodeId: string): number {
    return this.records.get(nodeId)?.rank ?? Infinity;
  }

  /** The most devices without an occupant on any one node. */
  mostFree(): number {
    for (let k = this.byFree.length - 1; k > 0; k--) if ((this.byFree[k]?.size ?? 0) > 0) return k;
    return 0;
  }

  /**
   * Whether some node of the pool, emptied, would hold the plan: `devicesMin` devices of its memory.
   * A job no node holds waits for capacity whatever else holds it back (a tenant at its share would
   * be told `fair_share`, and no share it gets places it); no preemption places it either.
   * `uncordoned`: only among the nodes an admin has not cordoned.
   */
  someNodeHolds(plan: Pick<JobPlan, 'devicesMin' | 'deviceBytes'>, uncordoned = false): boolean {
    // Without a cordoned node both questions are one.
    const open = uncordoned && this.anyCordoned;
    const cache = open ? this.openHoldsByShape : this.holdsByShape;
    // Keyed by numbers: a string key built per waiting job is garbage a 10,000-job round makes.
    let byBytes = cache.get(plan.devicesMin);
    if (!byBytes) cache.set(plan.devicesMin, (byBytes = new Map()));
    let holds = byBytes.get(plan.deviceBytes);
    if (holds === undefined) {
      holds = false;
      for (const slots of this.slots.values()) {
        if (open && slots[0]?.node.cordoned) continue;
        let fit = 0;
        for (const s of slots) if (s.memoryBytes >= plan.deviceBytes) fit++;
        if (fit >= plan.devicesMin) {
          holds = true;
          break;
        }
      }
      byBytes.set(plan.deviceBytes, holds);
    }
    return holds;
  }
  /** Host memory held on a node by the offloaded state of its jobs. */
  hostUsedOn(nodeId: string): number {
    return this.records.get(nodeId)?.hostUsed ?? 0;
  }

  slotsOf(nodeId: string, devices: readonly number[]): Slot[] {
    return pick(this.slots.get(nodeId) ?? [], devices);
  }

  private setFree(rec: NodeRecord, count: number): void {
    // Re-added even to the same bucket: best fit takes the bucket's nodes in the order they changed.
    if (rec.free >= 0) this.byFree[rec.free]?.delete(rec);
    rec.free = count;
    (this.byFree[count] ??= new Set()).add(rec);
  }

  /** Nodes with a device that can take one more job (fewer than maxJobsPerDevice on it). */
  readonly openNodes = new Set<string>();
  private nextOpenSeq = 0;
  /**
   * By width, the open nodes with a whole group of that width whose devices all hold fewer than
   * maxJobsPerDevice jobs, in `openNodes` order: a job looking for a group to join visits only
   * these (at 10,000 queued jobs, two in three nodes it visited had no group of its width). Nodes
   * changed since the last look are brought up to date when next asked (`dirty`).
   */
  private readonly joinable = new Map<number, SeqTree>();
  private readonly dirty = new Set<NodeRecord>();

  private refreshFree(rec: NodeRecord, groupsKept = false): void {
    let free = 0;
    let open = false;
    for (const s of rec.slots) {
      if (s.occupants.length === 0) free++;
      if (s.occupants.length < this.policy.maxJobsPerDevice) open = true;
    }
    this.setFree(rec, free);
    if (open && !rec.open) {
      this.openNodes.add(rec.id);
      rec.openSeq = this.nextOpenSeq++;
    } else if (!open && rec.open) this.openNodes.delete(rec.id);
    rec.open = open;
    if (!groupsKept) rec.groups = null;
    this.dirty.add(rec);
  }

  /**
   * The nodes that may hold a whole group of `width` devices a job can join, in `openNodes` order
   * (a superset: load, memory and held devices are joinGroup's to check).
   */
  joinableNodes(width: number): readonly string[] {
    this.flush();
    return this.joinable.get(width)?.all() ?? [];
  }

  /** Brings the lists up to date with the nodes changed since the last look. */
  private flush(): void {
    if (this.dirty.size === 0) return;
    for (const rec of this.dirty) this.reindex(rec);
    this.dirty.clear();
  }

  /**
   * The position of the next node at or after position `from` of the `width` list (in `openNodes`
   * order) where a group may take `plan`'s load, or −1: nodes whose least-busy group's busiest
   * device could not (canJoin's sum, so exactly those) are passed over without a look. A full pool
   * of paired jobs on the planner's prior made one round with 10,000 queued jobs look at 1,067,472
   * groups, 98% too busy. The model must not change between the positions asked for.
   */
  nextJoinable(width: number, from: number, plan: JobPlan): number {
    this.flush();
    const tree = this.joinable.get(width);
    return tree ? tree.next(from, plan.busyFraction, switchFraction(plan), this.policy.maxGroupLoad) : -1;
  }

  /** The node at a position `nextJoinable` gave. */
  joinableAt(width: number, at: number): string {
    return this.joinable.get(width)!.idAt(at);
  }

  private reindex(rec: NodeRecord): void {
    const before = rec.listed;
    const seq = rec.open ? rec.openSeq : -1;
    const widths: number[] = [];
    const loads: number[] = [];
    const peaks: number[] = [];
    if (seq >= 0)
      for (const g of this.groupsOf(rec).groups) {
        let room = true;
        let load = 0;
        let peak = 0;
        for (const s of g) {
          if (s.occupants.length >= this.policy.maxJobsPerDevice) room = false;
          load += s.busy + s.switching;
          peak = Math.max(peak, s.busy + s.switching);
        }
        if (!room) continue;
        const k = widths.indexOf(g.length);
        // To a billionth: loads that differ in their last bits (sums in another order) tie.
        load = Math.round(load * 1e9) / 1e9;
        if (k < 0) {
          widths.push(g.length);
          loads.push(load);
          peaks.push(peak);
        } else {
          loads[k] = Math.min(loads[k]!, load);
          peaks[k] = Math.min(peaks[k]!, peak);
        }
      }
    const moved = before !== null && before.seq !== seq;
    if (this.byLoad) this.loadDirty.add(rec);
    // Most changes (a job joining a group that keeps room) keep the widths: only the loads change.
    if (!moved && before !== null && sameWidths(before.widths, widths)) {
      for (let k = 0; k < loads.length; k++) {
        before.loads[k] = loads[k]!;
        before.peaks[k] = peaks[k]!;
        this.joinable.get(widths[k]!)!.set(seq, rec.id, peaks[k]!);
      }
      return;
    }
    if (before) for (const w of before.widths) this.joinable.get(w)!.clear(before.seq);
    widths.forEach((w, k) => {
      let tree = this.joinable.get(w);
      if (!tree) this.joinable.set(w, (tree = new SeqTree()));
      tree.set(seq, rec.id, peaks[k]!);
    });
    rec.listed = { seq, widths, loads, peaks };
  }

  /**
   * By width, the nodes of `joinable` in the order of their least-loaded group's load: kept from
   * the round's first search for the cheapest group on any node (compaction asks it for every job it
   * moves; scanning every node for each cost as much as all the round's other group searches).
   */
  private byLoad: Map<number, OrderedNodes> | null = null;
  /** Nodes whose place in `byLoad` is out of date: brought up to date when next asked. */
  private readonly loadDirty = new Set<NodeRecord>();

  private relist(rec: NodeRecord): void {
    const before = rec.byLoadAs;
    const now: { widths: number[]; loads: number[] } = rec.listed ?? { widths: [], loads: [] };
    for (const w of before?.widths ?? []) if (!now.widths.includes(w)) this.byLoad!.get(w)!.delete(rec.id);
    now.widths.forEach((w, k) => ordered(this.byLoad!, w).insert(rec.id, now.loads[k]!, rec.rank));
    rec.byLoadAs = now;
  }

  /**
   * `joinGroup`'s answer on the node where it costs least (the first in pool order on a tie), not
   * on `skip`: nodes are visited by their least-loaded group, and the visit stops once no node left
   * can cost less than the best found.
   */
  cheapestJoin(plan: JobPlan, count: number, skip: string): { nodeId: string; devices: number[] } | null {
    this.flush();
    if (!this.byLoad) {
      this.byLoad = new Map();
      for (const rec of this.records.values()) this.relist(rec);
    } else {
      for (const rec of this.loadDirty) this.relist(rec);
    }
    this.loadDirty.clear();
    const list = this.byLoad.get(count);
    if (!list) return null;
    // A node's cost is at least this above its least-loaded group's load (joinCost's sum, less the
    // free-device term); the margin covers the load's rounding and the sums' different order.
    const floor = count * 1000 + count * (plan.busyFraction + switchFraction(plan)) - 1e-8;
    let cost = Infinity;
    let cheapest = '';
    // Once a node costs no more than its floor, the nodes after it with the same (rounded) load come
    // later in pool order and cannot cost less: it wins their ties. A cost lower by under a
    // billionth counts as a tie (the scan it replaces took it; over 101,305 searches in the
    // simulator none was).
    let tight = Infinity;
    const { nodes, keys } = list;
    for (let i = 0; i < nodes.length && floor + keys[i]! <= cost && keys[i]! < tight; i++) {
      const nodeId = nodes[i]!;
      if (nodeId === skip) continue;
      const c = this.joinCost(nodeId, plan, count);
      if (c < cost || (c === cost && c < Infinity && this.rank(nodeId) < this.rank(cheapest))) {
        cost = c;
        cheapest = nodeId;
        if (c <= floor + keys[i]! + 2e-8) tight = keys[i]!;
      }
    }
    const g = cheapest ? this.joinGroup(cheapest, plan, count) : null;
    return g && { nodeId: cheapest, devices: g.devices };
  }

  /**
   * Each node's whole time-share groups (devices whose jobs hold exactly those devices of the node),
   * in device order, and their widths: kept with the occupants, so a job looking for a group to
   * join passes over a node without one of its width at the cost of a lookup.
   */
  private groupsOf(rec: NodeRecord): { groups: Slot[][]; widths: Set<number> } {
    return (rec.groups ??= this.findGroups(rec.slots));
  }

  private findGroups(slots: readonly Slot[]): { groups: Slot[][]; widths: Set<number> } {
    const byJobs = new Map<string, Slot[]>();
    const held = new Map<string, number>();
    for (const s of slots) {
      if (s.occupants.length === 0) continue;
      for (const o of s.occupants) held.set(o.jobId, (held.get(o.jobId) ?? 0) + 1);
      const key = occupantsKey(s.occupants);
      const g = byJobs.get(key);
      if (g) g.push(s);
      else byJobs.set(key, [s]);
    }
    const groups: Slot[][] = [];
    const widths = new Set<number>();
    for (const g of byJobs.values())
      if (g[0]!.occupants.every((o) => held.get(o.jobId) === g.length)) {
        groups.push(g);
        widths.add(g.length);
      }
    return { groups, widths };
  }

  /**
   * What `fitOnNode(nodeId, plan, count)` gives when no `count` free devices fit anywhere: the
   * least-loaded whole group of `count` devices the job may join, or null. Costs a lookup on a node
   * without a group of that width.
   */
  joinGroup(
    nodeId: string,
    plan: JobPlan,
    count: number,
    joiner: string | null = null,
    isProtected: ((tenantId: string) => boolean) | null = null,
  ): { devices: number[]; shared: number; cost: number } | null {
    const cost = this.joinCost(nodeId, plan, count, joiner, isProtected);
    const group = this.joined;
    if (group === null) return null;
    return { devices: group.map((s) => s.index), shared: count, cost };
  }

  /** The group `joinCost` chose last (null: none). */
  private joined: Slot[] | null = null;

  /**
   * `joinGroup`'s cost alone (Infinity: no group), without building its answer: a round asks this
   * of several nodes for each of thousands of jobs and keeps one.
   */
  joinCost(
    nodeId: string,
    plan: JobPlan,
    count: number,
    joiner: string | null = null,
    isProtected: ((tenantId: string) => boolean) | null = null,
  ): number {
    this.joined = null;
    const rec = this.records.get(nodeId);
    if (!rec) return Infinity;
    const { groups, widths } = this.groupsOf(rec);
    if (!widths.has(count)) return Infinity;
    if (rec.hostUsed + plan.hostBytes > rec.hostMemoryBytes) return Infinity;
    let best: Slot[] | null = null;
    let bestLoad = Infinity;
    // Loops, not callbacks: a round asks this of every open node for thousands of jobs.
    for (let k = 0; k < groups.length; k++) {
      const g = groups[k]!;
      if (g.length !== count) continue;
      if (joiner !== null && isProtected && this.protectedFrom(g[0]!, joiner, isProtected)) {
        if (this.allCanJoin(g, plan)) this.skippedProtected = true;
        continue;
      }
      if (!this.allCanJoin(g, plan)) continue;
      let load = 0;
      // Summed as fitOnNode sums it, so the same group wins.
      for (const s of g) load += s.busy + s.switching + plan.busyFraction + switchFraction(plan);
      if (load < bestLoad) {
        best = g;
        bestLoad = load;
      }
    }
    if (!best) return Infinity;
    let free = 0;
    for (const s of rec.slots)
      if (s.occupants.length === 0 && !s.held && s.memoryBytes >= plan.deviceBytes) free++;
    this.joined = best;
    return count * 1000 + bestLoad + free / 1000;
  }

  /** Set by joinGroup when it passed over a group it could join but for `isProtected`. */
  skippedProtected = false;

  /** Whether a slot holds a job of another tenant that `isProtected` says `joiner` may not share with. */
  private protectedFrom(slot: Slot, joiner: string, isProtected: (tenantId: string) => boolean): boolean {
    for (let k = 0; k < slot.occupants.length; k++) {
      const t = slot.occupants[k]!.tenantId;
      if (t !== joiner && isProtected(t)) return true;
    }
    return false;
  }

  private allCanJoin(slots: readonly Slot[], plan: JobPlan): boolean {
    for (let k = 0; k < slots.length; k++) if (!this.canJoin(slots[k]!, plan)) return false;
    return true;
  }

  add(nodeId: string, devices: readonly number[], o: Occupant): void {
    const rec = this.records.get(nodeId);
    if (!rec) return;
    const added = pick(rec.slots, devices);
    // A job joining a whole group takes all of it: the node's groups stay as they were.
    let joinsWhole = false;
    const groups = rec.groups?.groups;
    if (groups && added.length > 0)
      for (const g of groups) {
        if (!g.includes(added[0]!)) continue;
        joinsWhole = g.length === added.length;
        for (const a of added) if (!g.includes(a)) joinsWhole = false;
        break;
      }
    for (const s of added) {
      s.occupants.push(o);
      s.busy += o.plan.busyFraction;
      s.switching += switchFraction(o.plan);
    }
    rec.hostUsed += o.plan.hostBytes;
    this.refreshFree(rec, joinsWhole);
  }

  /**
   * Best fit on free devices alone: the node with the fewest free devices that still has `count`
   * free ones big enough for the job, so wide jobs keep finding whole nodes.
   */
  exclusiveFit(plan: JobPlan, count: number): { nodeId: string; devices: number[] } | null {
    for (let k = count; k < this.byFree.length; k++) {
      for (const rec of this.byFree[k] ?? []) {
        if (rec.hostUsed + plan.hostBytes > rec.hostMemoryBytes) continue;
        const devices: number[] = [];
        for (const s of rec.slots)
          if (s.occupants.length === 0 && !s.held && s.memoryBytes >= plan.deviceBytes) devices.push(s.index);
        if (devices.length >= count) return { nodeId: rec.id, devices: devices.slice(0, count) };
      }
    }
    return null;
  }

  remove(nodeId: string, jobId: string): void {
    const rec = this.records.get(nodeId);
    if (!rec) return;
    let host = 0;
    for (const s of rec.slots) {
      const i = s.occupants.findIndex((o) => o.jobId === jobId);
      if (i >= 0) {
        const p = s.occupants[i]!.plan;
        host = p.hostBytes;
        s.occupants.splice(i, 1);
        s.busy -= p.busyFraction;
        s.switching -= switchFraction(p);
      }
    }
    rec.hostUsed = Math.max(0, rec.hostUsed - host);
    this.refreshFree(rec);
  }

  /** Whether `plan` may join the jobs on this device (memory, jobs per device, load, switches). */
  canJoin(slot: Slot, plan: JobPlan, exclude?: ReadonlySet<string>): boolean {
    if (plan.deviceBytes > slot.memoryBytes || slot.held) return false;
    if (!exclude) {
      // The common case without allocations: the group's sums are kept on the slot.
      const n = slot.occupants.length;
      if (n === 0) return true;
      if (!this.policy.timeSharing || n + 1 > this.policy.maxJobsPerDevice) return false;
      const load = slot.busy + slot.switching + plan.busyFraction + switchFraction(plan);
      const sw = (slot.switching + switchFraction(plan)) / Math.max(1, load);
      return load <= this.policy.maxGroupLoad && sw <= this.policy.maxSwitchFraction;
    }
    const others = slot.occupants.filter((o) => !exclude.has(o.jobId)).map((o) => o.plan);
    return groupAdmits(this.policy, others, plan);
  }

  /**
   * The best `count` devices of one node for `plan`, or null: free devices first, then the least
   * loaded groups it may join. `exclude` treats those jobs as gone (a preemption being weighed).
   */
  fitOnNode(
    nodeId: string,
    plan: JobPlan,
    count: number,
    exclude?: ReadonlySet<string>,
  ): { devices: number[]; shared: number; cost: number } | null {
    const slots = this.slots.get(nodeId) ?? [];
    if (slots.length < count) return null;
    const node = slots[0]!.node;
    let host = this.hostUsedOn(nodeId);
    if (exclude) {
      const seen = new Set<string>();
      for (const s of slots)
        for (const o of s.occupants)
          if (exclude.has(o.jobId) && !seen.has(o.jobId)) {
            seen.add(o.jobId);
            host -= o.plan.hostBytes;
          }
    }
    if (host + plan.hostBytes > node.hostMemoryBytes) return null;
    const usable: { index: number; load: number; occupied: boolean; others: readonly Occupant[] }[] = [];
    const held = new Map<string, number>();
    for (const s of slots) {
      const others = exclude ? s.occupants.filter((o) => !exclude.has(o.jobId)) : s.occupants;
      for (const o of others) held.set(o.jobId, (held.get(o.jobId) ?? 0) + 1);
      if (!this.canJoin(s, plan, exclude)) continue;
      // Without exclusions the group's sums on the slot give the load without allocating.
      const load = exclude
        ? deviceLoad([...others.map((o) => o.plan), plan])
        : others.length === 0
          ? plan.busyFraction
          : s.busy + s.switching + plan.busyFraction + switchFraction(plan);
      usable.push({ index: s.index, load, occupied: others.length > 0, others });
    }
    const free = usable.filter((u) => !u.occupied).sort((a, b) => a.load - b.load || a.index - b.index);
    let chosen = free.slice(0, count);
    if (chosen.length < count) {
      // A time-share group is whole: the job joins devices whose jobs hold exactly those devices,
      // and takes them all. Joining part of a wider job's devices (or mixing free and shared ones)
      // would chain jobs through the all-at-once device lock: each waits for every partner to be
      // idle at the same moment while its other devices sit unused.
      const groups = new Map<string, typeof usable>();
      for (const u of usable) {
        if (!u.occupied) continue;
        const key = occupantsKey(u.others);
        groups.set(key, [...(groups.get(key) ?? []), u]);
      }
      let best: typeof usable | null = null;
      let bestLoad = Infinity;
      for (const [key, g] of groups) {
        if (g.length !== count || key.split('\n').some((id) => held.get(id) !== count)) continue;
        const load = g.reduce((sum, u) => sum + u.load, 0);
        if (load < bestLoad) [best, bestLoad] = [g, load];
      }
      if (!best) return null;
      chosen = best;
    }
    const shared = chosen.filter((c) => c.occupied).length;
    // Cost: shared devices weigh by their load; a node with fewer free devices left is preferred
    // for exclusive placements (best fit keeps whole nodes free for wide jobs).
    const cost = shared * 1000 + chosen.reduce((sum, c) => sum + c.load, 0) + free.length / 1000;
    return { devices: chosen.map((c) => c.index).sort((a, b) => a - b), shared, cost };
  }

  /** Free devices (no occupant, not held for a job coming back) on a node. */
  freeOn(nodeId: string): number[] {
    return (this.slots.get(nodeId) ?? [])
      .filter((s) => s.occupants.length === 0 && !s.held)
      .map((s) => s.index);
  }
}
