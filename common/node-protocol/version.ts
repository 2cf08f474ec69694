/**
 * The node protocol's version. A daemon names the version of every message it sends in the
 * `Timeshare-Node-Protocol` header (a request without it is version 1, the first, which had none),
 * and the report records in its outbox keep the version they were written in, so a record that
 * waited through a daemon upgrade is still sent as what it is. The control plane is upgraded
 * before its daemons (as Kubernetes upgrades its API servers before kubelets): it accepts every
 * version from `OLDEST_NODE_PROTOCOL_VERSION` to its own, raising an older body to its own before
 * validating it (`upgradeNodeMessage`), and refuses a newer one with `node_protocol_unsupported`,
 * which a daemon keeps its record for instead of dropping it.
 *
 * Changing a message a daemon sends in a way the control plane's schema would refuse (a new
 * required field, a removed or renamed one, a new outcome an older control plane does not know)
 * bumps `NODE_PROTOCOL_VERSION` and adds the step from the previous version to `nodeMessageUpgrades`.
 * Messages the control plane sends (assignments, answers) only grow: daemons ignore what they do not read.
 */

export const NODE_PROTOCOL_VERSION = 4;
/** Raised only when no daemon can still hold a message of an older version. */
export const OLDEST_NODE_PROTOCOL_VERSION = 1;
export const NODE_PROTOCOL_HEADER = 'Timeshare-Node-Protocol';

/** The messages a daemon sends, by what they are. */
export type NodeMessageKind = 'register' | 'heartbeat' | 'start' | 'report' | 'checkpoint' | 'finish';

/** How to raise the messages of version `to − 1` to version `to`; a kind not named is unchanged. */
export interface NodeMessageUpgrade {
  to: number;
  messages: Partial<Record<NodeMessageKind, (body: unknown) => unknown>>;
}

/** One step per version after the oldest accepted, in order. */
export const nodeMessageUpgrades: readonly NodeMessageUpgrade[] = [
  // 2: a metric's value may be "NaN", "Infinity" or "-Infinity" (version 1 sent what JSON wrote for
  // them, null, and the report was refused whole). Only widened: a version 1 message is a version 2 one.
  { to: 2, messages: {} },
  // 3: a `succeeded` finish may say why its run ended (`reason`: steps_completed, target_reward,
  // target_accuracy); the finish schema is strict, so version 2 refused the field. Only widened: a
  // version 2 finish is a version 3 one whose reason is not known (null).
  { to: 3, messages: {} },
  // 4: a finish says when its run ended (`endedAt`, the node's clock): one delivered late (the API
  // away, the record waiting in the outbox) was dated by its delivery. Only widened: a version 3
  // finish is a version 4 one whose end is not known (null).
  { to: 4, messages: {} },
];

/**
 * `body`, a `kind` message of version `from`, raised step by step to version `to` (the control
 * plane's own). The schema of version `to` validates the result.
 */
export function upgradeNodeMessage(
  kind: NodeMessageKind,
  from: number,
  body: unknown,
  to: number = NODE_PROTOCOL_VERSION,
  steps: readonly NodeMessageUpgrade[] = nodeMessageUpgrades,
): unknown {
  let out = body;
  for (let v = from + 1; v <= to; v++) {
    const step = steps.find((s) => s.to === v);
    if (!step) throw new Error(`node protocol: no upgrade to version ${v}`);
    out = step.messages[kind]?.(out) ?? out;
  }
  return out;
}
