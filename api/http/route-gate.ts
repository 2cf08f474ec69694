/**
 * What every request passes before any body is read or any route runs: a path that decodes, the
 * per-address limit for callers without credentials (and for the token exchange), a known path
 * (404), a method the path has (405 with `Allow`), credentials where the route needs them (401),
 * and a query string that decodes, naming only parameters the route declares (400; the route's
 * schema checks those).
 * A refused request's body is never read; its connection is closed so it is not read to the end.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../../common/errors.js';
import { missingCredentials } from '../auth/middleware.js';
import { clientAddress, rateLimited, type RateLimiter } from './rate-limit.js';
import type { PathRoutes, RouteEntry } from './route-table.js';

declare module 'express-serve-static-core' {
  interface Request {
    /** The declared route this request matched (set by the gate). */
    routeEntry?: RouteEntry;
    /** The raw JSON body, kept by the body parser for the NUL check (nul-guard.ts). */
    bodyText?: Buffer;
  }
}

/** Whether a request carries a body that a refusal would otherwise leave on the connection. */
export const hasBody = (req: IncomingMessage): boolean =>
  req.headers['transfer-encoding'] !== undefined ||
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

/** Closes a connection whose request body is refused unread (keep-alive would read it through). */
export function refuseBody(req: IncomingMessage, res: ServerResponse): void {
  if (hasBody(req)) res.setHeader('Connection', 'close');
}

export function routeGate(match: (path: string) => PathRoutes | null, addresses: RateLimiter) {
  return (req: Request, res: Response, next: NextFunction) => {
    try {
      decodeURIComponent(req.path);
    } catch {
      refuseBody(req, res);
      return next(new ApiError('invalid_request', 'the path is not valid percent-encoding', 'path'));
    }
    const routes = match(req.path);
    const entry = routes?.get(req.method);
    if (!req.principal || entry?.perAddress) {
      const wait = addresses.takeKey(clientAddress(req.socket));
      if (wait !== null) {
        refuseBody(req, res);
        return next(rateLimited(addresses, wait));
      }
    }
    if (!routes) {
      refuseBody(req, res);
      return next(new ApiError('not_found', `no route for ${req.method} ${req.path}`));
    }
    if (!entry) {
      refuseBody(req, res);
      res.setHeader('Allow', [...routes.keys()].join(', '));
      return next(new ApiError('method_not_allowed', `${req.path} does not take ${req.method}`));
    }
    if (entry.auth && !req.principal) {
      refuseBody(req, res);
      return next(missingCredentials());
    }
    const refused = queryRefusal(req.url, entry);
    if (refused) {
      refuseBody(req, res);
      return next(refused);
    }
    req.routeEntry = entry;
    next();
  };
}

/**
 * Why a request's query string is refused, or null. Routes that declare parameters parse them with
 * strict schemas; the others ignored any (`/v1/usage?foo=1` answered 200), and a query that did not
 * decode reached routes as raw text (`?name=%E0%A4%A` listed nothing instead of a 400).
 */
export function queryRefusal(url: string | undefined, entry: RouteEntry): ApiError | null {
  const at = url?.indexOf('?') ?? -1;
  const raw = at < 0 ? '' : url!.slice(at + 1);
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    let name: string;
    try {
      name = decodeURIComponent((eq < 0 ? part : part.slice(0, eq)).replace(/\+/g, ' '));
      decodeURIComponent(part.slice(eq + 1).replace(/\+/g, ' '));
    } catch {
      return new ApiError('invalid_request', 'the query string is not valid percent-encoding', 'query');
    }
    if (!entry.query) return new ApiError('invalid_request', `unknown query parameter "${name}"`, name);
  }
  return null;
}
