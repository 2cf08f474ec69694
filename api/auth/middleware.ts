/**
 * Who is calling: the admin key (from configuration), or a JWT minted by POST /v1/auth/token for a
 * tenant or a node key. Routes declare which roles may call them; a valid principal with the wrong
 * role gets 403, anything else 401.
 */
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../../common/errors.js';
import { secretMatcher } from './api-keys.js';
import { verifyToken, type Principal } from './jwt.js';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
  }
}

export interface AuthConfig {
  adminKey: string;
  jwtSecret: string;
}

/**
 * The caller of an `Authorization` header value: undefined when there is none; throws 401 for a
 * malformed header or a credential that is neither a valid token nor the admin key.
 */
export type Identify = (header: string | undefined) => Principal | undefined;

export function identifier(cfg: AuthConfig): Identify {
  const isAdminKey = secretMatcher(cfg.adminKey);
  return (header) => {
    if (!header) return undefined;
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match?.[1]) throw new ApiError('unauthorized', 'Authorization header must be "Bearer <token>"');
    const credential = match[1];
    // Tokens first: they are nearly every request, and a JWT is never the admin key's shape.
    const principal = verifyToken(cfg.jwtSecret, credential);
    if (principal) return principal;
    if (isAdminKey(credential)) return { role: 'admin', sub: 'admin' };
    throw new ApiError('unauthorized', 'invalid or expired token');
  };
}

export function authenticate(identify: Identify) {
  return (req: Request, _res: Response, next: NextFunction) => {
    try {
      req.principal = identify(req.headers.authorization);
    } catch (err) {
      return next(err);
    }
    next();
  };
}

export type Role = Principal['role'];

export const missingCredentials = () =>
  new ApiError('unauthorized', 'missing credentials: send "Authorization: Bearer <token>"');

/** Throws 401 without a principal and 403 for a principal whose role is not among `roles`. */
export function checkRole(principal: Principal | undefined, roles: readonly Role[]): Principal {
  if (!principal) throw missingCredentials();
  if (!roles.includes(principal.role))
    throw new ApiError('forbidden', `this route is for ${roles.join(' or ')} credentials`);
  return principal;
}

export function requireRole(...roles: Role[]) {
  return (req: Request, _res: Response, next: NextFunction) => {
    try {
      checkRole(req.principal, roles);
    } catch (err) {
      return next(err);
    }
    next();
  };
}

/** The calling tenant's id; only valid behind requireRole('tenant'). */
export function tenantOf(req: Request): string {
  if (req.principal?.role !== 'tenant') throw new ApiError('forbidden', 'tenant credentials required');
  return req.principal.sub;
}

/**
 * For node routes under `/v1/nodes/:id/…`: the node must be the one the calling node key registered
 * last. Another node's id answers 404, as a node that does not exist would.
 */
export function requireOwnNode(isOwner: (nodeId: string, keyId: string) => Promise<boolean>) {
  return async (req: Request, _res: Response, next: NextFunction) => {
    const nodeId = req.params.id as string;
    if (req.principal?.role !== 'node' || !(await isOwner(nodeId, req.principal.sub))) {
      return next(new ApiError('not_found', 'node not found'));
    }
    next();
  };
}
