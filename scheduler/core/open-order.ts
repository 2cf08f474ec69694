/**
 * Node ids kept in the order of a sequence number each carries, for a scan that must visit nodes in
 * the order they became open (the round's choice among the first groups found depends on it).
 * Inserts and deletes shift an array: a pool's nodes number in the thousands at most.
 */
export class OrderedNodes {
  private readonly ids: string[] = [];
  private readonly seqs: number[] = [];
  private readonly seqOf = new Map<string, number>();

  get size(): number {
    return this.ids.length;
  }

  /** In ascending sequence order; read it before the next change. */
  get nodes(): readonly string[] {
    return this.ids;
  }

  insert(nodeId: string, seq: number): void {
    if (this.seqOf.has(nodeId)) this.delete(nodeId);
    const at = this.lowerBound(seq);
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
