/**
 * Nodes by the sequence number they became open with, each with a load (its least-busy group's
 * busiest device), in a min-tree: the next node in sequence order whose load a job could join is
 * found in O(log n), passing over runs of full nodes without visiting them. The round's choice
 * among the first groups found depends on that order, so it is kept exactly.
 */
export class SeqTree {
  private size = 1;
  private min = new Float64Array(2).fill(Infinity);
  private ids: (string | undefined)[] = [];
  private count = 0;

  /** How many nodes it holds. */
  get length(): number {
    return this.count;
  }

  set(seq: number, nodeId: string, load: number): void {
    while (seq >= this.size) this.grow();
    if (this.ids[seq] === undefined) this.count++;
    this.ids[seq] = nodeId;
    this.update(seq, load);
  }

  clear(seq: number): void {
    if (seq >= this.size || this.ids[seq] === undefined) return;
    this.ids[seq] = undefined;
    this.count--;
    this.update(seq, Infinity);
  }

  idAt(seq: number): string {
    return this.ids[seq]!;
  }

  /**
   * The first sequence number ≥ `from` whose node's load `l` has `(l + busy) + switching ≤ bound`
   * (the sum `PoolModel.canJoin` makes, so the test is exact), or −1. The sum grows with `l`, so a
   * subtree whose least load fails holds no node that passes.
   */
  next(from: number, busy: number, switching: number, bound: number): number {
    if (from >= this.size) return -1;
    const min = this.min;
    let i = this.size + from;
    // Usually the very next node takes it: a look at its leaf.
    if (min[i]! + busy + switching <= bound) return from;
    // Else up until a subtree to the right holds one, then down to its leftmost.
    for (;;) {
      if (i === 1) return -1;
      if ((i & 1) === 0 && min[i + 1]! + busy + switching <= bound) {
        i++;
        break;
      }
      i >>= 1;
    }
    while (i < this.size) i = min[2 * i]! + busy + switching <= bound ? 2 * i : 2 * i + 1;
    return i - this.size;
  }

  /** Every node, in sequence order. */
  all(): string[] {
    return this.ids.filter((id): id is string => id !== undefined);
  }

  private update(seq: number, load: number): void {
    let i = this.size + seq;
    this.min[i] = load;
    for (i >>= 1; i >= 1; i >>= 1) this.min[i] = Math.min(this.min[2 * i]!, this.min[2 * i + 1]!);
  }

  private grow(): void {
    const leaves = this.min.subarray(this.size, 2 * this.size);
    this.size *= 2;
    const min = new Float64Array(2 * this.size).fill(Infinity);
    min.set(leaves, this.size);
    for (let i = this.size - 1; i >= 1; i--) min[i] = Math.min(min[2 * i]!, min[2 * i + 1]!);
    this.min = min;
  }
}
