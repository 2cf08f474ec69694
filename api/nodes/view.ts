/** A node as the admin routes show it (GET /v1/nodes, the cordon routes): the `Node` schema. */

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

export function nodeView(n: NodeRow) {
  return {
    id: n.id,
    name: n.name,
    pool: n.pool.name,
    status: n.status,
    lastHeartbeatAt: n.lastHeartbeatAt.toISOString(),
    cordon: n.cordonedAt
      ? { cordonedAt: n.cordonedAt.toISOString(), reason: n.cordonReason, evict: n.cordonEvict }
      : null,
    devices: n.devices.map((d) => ({
      index: d.index,
      kind: d.kind,
      memoryBytes: Number(d.memoryBytes),
      freeMemoryBytes: Number(d.freeMemoryBytes),
      threads: d.threads,
    })),
  };
}
