/**
 * Node ids kept in the order of a number each carries (its sequence number: when it became open;
 * or a load), for a scan that must visit nodes in that order (the round's choice among the first
 * groups found depends on it). Equal numbers are allowed. Inserts and deletes shift an array: a
 * pool's nodes number in the thousands at most.
 */
export class OrderedNodes {
  private readonly ids: string[] = [];
  private readonly seqs: number[] = [];
  private readonly seqOf = new Map<string, number>();

  /** `tie`: the order of nodes with equal numbers (lowest first); without it, the latest first. */
  constructor(private readonly tie?: (nodeId: string) => number) {}

  get size(): number {
    return this.ids.length;
  }

  /** In ascending sequence order; read it before the next change. */
  get nodes(): readonly string[] {
    return this.ids;
  }

  /** Their sequence numbers, in the same order. */
  get keys(): readonly number[] {
    return this.seqs;
  }

  insert(nodeId: string, seq: number): void {
    if (this.seqOf.has(nodeId)) this.delete(nodeId);
    let at = this.lowerBound(seq);
    if (this.tie) {
      const mine = this.tie(nodeId);
      while (at < this.ids.length && this.seqs[at] === seq && this.tie(this.ids[at]!) < mine) at++;
    }
    this.ids.splice(at, 0, nodeId);
    this.seqs.splice(at, 0, seq);
    this.seqOf.set(nodeId, seq);
  }

  delete(nodeId: string): void {
    const seq = this.seqOf.get(nodeId);
    if (seq === undefined) return;
    this.seqOf.delete(nodeId);
    let at = this.lowerBound(seq);
    while (this.ids[at] !== nodeId) at++;
    this.ids.splice(at, 1);
    this.seqs.splice(at, 1);
  }

  private lowerBound(seq: number): number {
    let lo = 0;
    let hi = this.seqs.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.seqs[mid]! < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
