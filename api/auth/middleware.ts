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

export function authenticate(cfg: AuthConfig) {
  const isAdminKey = secretMatcher(cfg.adminKey);
  return (req: Request, _res: Response, next: NextFunction) => {
    const header = req.headers.authorization;
    if (!header) return next();
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match?.[1])
      return next(new ApiError('unauthorized', 'Authorization header must be "Bearer <token>"'));
    const credential = match[1];
    // Tokens first: they are nearly every request, and a JWT is never the admin key's shape.
    const principal = verifyToken(cfg.jwtSecret, credential);
    if (principal) {
      req.principal = principal;
      return next();
    }
    if (isAdminKey(credential)) {
      req.principal = { role: 'admin', sub: 'admin' };
      return next();
    }
    next(new ApiError('unauthorized', 'invalid or expired token'));
  };
}

export type Role = Principal['role'];

export function requireRole(...roles: Role[]) {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (!req.principal)
      return next(new ApiError('unauthorized', 'missing credentials: send "Authorization: Bearer <token>"'));
    if (!roles.includes(req.principal.role)) {
      return next(new ApiError('forbidden', `this route is for ${roles.join(' or ')} credentials`));
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
