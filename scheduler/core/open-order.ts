/**
 * Node ids kept in the order of a number each carries (a load), then of a tie-break number (its
 * place in the pool), for a scan that must visit nodes in that order and stop early (compaction's
 * search for the cheapest group, `PoolModel.cheapestJoin`). Inserts and deletes shift arrays: a
 * pool's nodes number in the thousands at most.
 */
export class OrderedNodes {
  private readonly ids: string[] = [];
  private readonly seqs: number[] = [];
  private readonly ties: number[] = [];
  private readonly at = new Map<string, [number, number]>();

  get size(): number {
    return this.ids.length;
  }

  /** In ascending order; read it before the next change. */
  get nodes(): readonly string[] {
    return this.ids;
  }

  /** Their numbers, in the same order. */
  get keys(): readonly number[] {
    return this.seqs;
  }

  insert(nodeId: string, seq: number, tie = 0): void {
    const was = this.at.get(nodeId);
    if (was && was[0] === seq && was[1] === tie) return;
    if (was) this.delete(nodeId);
    const i = this.lowerBound(seq, tie);
    this.ids.splice(i, 0, nodeId);
    this.seqs.splice(i, 0, seq);
    this.ties.splice(i, 0, tie);
    this.at.set(nodeId, [seq, tie]);
  }

  delete(nodeId: string): void {
    const was = this.at.get(nodeId);
    if (was === undefined) return;
    this.at.delete(nodeId);
    let i = this.lowerBound(was[0], was[1]);
    while (this.ids[i] !== nodeId) i++;
    this.ids.splice(i, 1);
    this.seqs.splice(i, 1);
    this.ties.splice(i, 1);
  }

  private lowerBound(seq: number, tie: number): number {
    let lo = 0;
    let hi = this.seqs.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const s = this.seqs[mid]!;
      if (s < seq || (s === seq && this.ties[mid]! < tie)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
