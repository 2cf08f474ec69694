/**
 * A node as the admin routes show it (GET /v1/nodes, the cordon routes): the `Node` schema; its
 * cordon also on each of its devices in a pool's timeline (GET /v1/pools/{name}/timeline).
 */

interface NodeRow {
  id: string;
  name: string;
  status: string;
  lastHeartbeatAt: Date;
  cordonedAt: Date | null;
  cordonReason: string | null;
  cordonEvict: boolean;
  pool: { name: string };
  devices: { index: number; kind: string; memoryBytes: bigint; freeMemoryBytes: bigint; threads: number }[];
}

/** A node's cordon columns, as the `NodeCordon` schema shows them: null while it is not cordoned. */
export function cordonView(n: Pick<NodeRow, 'cordonedAt' | 'cordonReason' | 'cordonEvict'>) {
  return n.cordonedAt
    ? { cordonedAt: n.cordonedAt.toISOString(), reason: n.cordonReason, evict: n.cordonEvict }
    : null;
}

export function nodeView(n: NodeRow) {
  return {
    id: n.id,
    name: n.name,
    pool: n.pool.name,
    status: n.status,
    lastHeartbeatAt: n.lastHeartbeatAt.toISOString(),
    cordon: cordonView(n),
    devices: n.devices.map((d) => ({
      index: d.index,
      kind: d.kind,
      memoryBytes: Number(d.memoryBytes),
      freeMemoryBytes: Number(d.freeMemoryBytes),
      threads: d.threads,
    })),
  };
}
