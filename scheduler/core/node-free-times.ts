/**
 * The estimate's replay of a pool, node by node: each node keeps its devices' free times in order,
 * and a job of width w can start on a node when its w-th earliest device is free (a job holds one
 * node, as the round places it). Per width, a min-tree over the nodes finds the earliest such node
 * in O(log nodes), so a 10,000-job queue on 512 nodes costs a few milliseconds. Treating the
 * pool's devices as interchangeable instead told a wide job it starts when any w devices free up,
 * and the jobs behind it that they wait for it.
 */
export class NodeFreeTimes {
  /** Per node, its devices' free times, ascending. */
  private readonly times: Float64Array[];
  /** Per width asked for, a min-tree over the nodes of their w-th earliest free time. */
  private readonly trees = new Map<number, Float64Array>();
  private readonly size: number;
  /** The most devices any node has: a wider job cannot start at all. */
  readonly widest: number;

  /** `nodes[n]`: node n's devices' free times (ms), any order; `now` is the earliest any may be. */
  constructor(nodes: readonly number[][], now: number) {
    this.times = nodes.map((ts) => {
      const a = new Float64Array(ts.length);
      for (let i = 0; i < ts.length; i++) a[i] = Math.max(now, ts[i]!);
      return a.sort();
    });
    let size = 1;
    while (size < Math.max(1, nodes.length)) size *= 2;
    this.size = size;
    this.widest = nodes.reduce((m, ts) => Math.max(m, ts.length), 0);
  }

  private tree(width: number): Float64Array {
    let t = this.trees.get(width);
    if (t) return t;
    t = new Float64Array(2 * this.size).fill(Infinity);
    for (let n = 0; n < this.times.length; n++) t[this.size + n] = this.keyOf(n, width);
    for (let i = this.size - 1; i >= 1; i--) t[i] = Math.min(t[2 * i]!, t[2 * i + 1]!);
    this.trees.set(width, t);
    return t;
  }

  private keyOf(node: number, width: number): number {
    const ts = this.times[node]!;
    return width <= ts.length ? ts[width - 1]! : Infinity;
  }

  /** The node where `width` devices are free first, and when; null when no node has that many. */
  earliest(width: number): { node: number; at: number } | null {
    if (width > this.widest) return null;
    const t = this.tree(width);
    if (t[1] === Infinity) return null;
    let i = 1;
    while (i < this.size) i = t[2 * i]! <= t[2 * i + 1]! ? 2 * i : 2 * i + 1;
    return { node: i - this.size, at: t[1]! };
  }

  /** Whether `width` of the node's devices are free exactly at `at` (promised to nobody after it). */
  holds(node: number, width: number, at: number): boolean {
    const ts = this.times[node];
    if (!ts) return false;
    let n = 0;
    for (const t of ts) if (t === at && ++n >= width) return true;
    return false;
  }

  /** `width` devices of the node free at `at` stay taken until `until` (a job that outlives the one there). */
  extend(node: number, width: number, at: number, until: number): void {
    const ts = this.times[node]!;
    const kept: number[] = [];
    let left = width;
    for (const t of ts) {
      if (left > 0 && t === at) left--;
      else kept.push(t);
    }
    for (let n = 0; n < width - left; n++) kept.push(until);
    ts.set(kept.sort((a, b) => a - b));
    this.refresh(node);
  }

  /** The job takes `width` of the node's earliest devices until `until`. */
  occupy(node: number, width: number, until: number): void {
    // Its first `width` entries become `until`: the later ones still earlier move ahead of them.
    const ts = this.times[node]!;
    let k = 0;
    for (let j = width; j < ts.length && ts[j]! < until; j++) ts[k++] = ts[j]!;
    for (let n = 0; n < width; n++) ts[k++] = until;
    this.refresh(node);
  }

  private refresh(node: number): void {
    this.trees.forEach((t, w) => {
      let i = this.size + node;
      t[i] = this.keyOf(node, w);
      for (i >>= 1; i >= 1; i >>= 1) t[i] = Math.min(t[2 * i]!, t[2 * i + 1]!);
    });
  }
}
