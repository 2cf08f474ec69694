/**
 * The node protocol version of a daemon's request (common/node-protocol/version.ts): every route a
 * daemon calls reads its messages through `nodeMessage`, which refuses a version this control plane
 * does not accept and raises an older message to the current version before validating it.
 */
import type { Request, RequestHandler } from 'express';
import type { z } from 'zod';
import { ApiError } from '../../common/errors.js';
import { z as zo } from '../../common/zod.js';
import {
  NODE_PROTOCOL_HEADER,
  NODE_PROTOCOL_VERSION,
  OLDEST_NODE_PROTOCOL_VERSION,
  upgradeNodeMessage,
  type NodeMessageKind,
} from '../../common/node-protocol/index.js';
import { parseOrThrow } from './validate.js';

const accepted = `${OLDEST_NODE_PROTOCOL_VERSION}–${NODE_PROTOCOL_VERSION}`;

/** Whether this control plane reads messages of version `v`. */
export const protocolAccepted = (v: number): boolean =>
  Number.isInteger(v) && v >= OLDEST_NODE_PROTOCOL_VERSION && v <= NODE_PROTOCOL_VERSION;

/** The refusal of a version outside the accepted range (`shown` as the node sent it), at `param`. */
export const protocolRefused = (shown: string, param: string): ApiError =>
  new ApiError(
    'node_protocol_unsupported',
    `node protocol ${shown} is not accepted here (versions ${accepted}); ` +
      'upgrade the control plane before its worker daemons',
    param,
  );

/** The version a request speaks; throws `node_protocol_unsupported` for one outside the accepted range. */
export function nodeProtocolOf(req: Request): number {
  const raw = req.get(NODE_PROTOCOL_HEADER);
  if (raw === undefined) return 1;
  const v = /^[1-9][0-9]{0,5}$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!protocolAccepted(v)) throw protocolRefused(JSON.stringify(raw), NODE_PROTOCOL_HEADER);
  return v;
}

/** Refuses a request whose node protocol version is not accepted (routes without a message body). */
export const nodeProtocolGuard: RequestHandler = (req, _res, next) => {
  nodeProtocolOf(req);
  next();
};

/** The request's body as the current version's `schema` reads it. */
export function nodeMessage<S extends z.ZodType>(
  req: Request,
  kind: NodeMessageKind,
  schema: S,
): z.output<S> {
  return parseOrThrow(schema, upgradeNodeMessage(kind, nodeProtocolOf(req), req.body ?? {}));
}

/** The header as the OpenAPI document states it, for every route a daemon calls. */
export const nodeProtocolHeaders = zo.object({
  [NODE_PROTOCOL_HEADER.toLowerCase()]: zo
    .string()
    .regex(/^[1-9][0-9]*$/)
    .optional()
    .openapi({
      description: `The node protocol version of the message (absent: 1); accepted: ${accepted}. Others get 400 \`node_protocol_unsupported\`.`,
    }),
});
