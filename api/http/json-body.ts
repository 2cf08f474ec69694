/**
 * The bodies routes take are JSON, read here once for every route that declares one (the route
 * table, from the OpenAPI registration). A body sent as anything else, or none where the route needs
 * one, is refused with one message that says what to send. Before, only `POST /v1/jobs` said so:
 * elsewhere body-parser skipped the body it did not recognise and the route's schema answered for
 * the missing object (`curl -d` sends a form content type: "Invalid input: expected object,
 * received undefined", `param: null`), or for a field the client had sent.
 *
 * JSON is `application/json` or any `application/*+json` type (RFC 6839's structured syntax suffix):
 * `PATCH /v1/jobs/{id}` as `application/merge-patch+json` (RFC 7396) is read as it is sent, since
 * its `{"priority": …}` is a merge patch of the job and means the same. The submission fast path
 * takes only `application/json` and leaves the rest to this (submit-fast-path.ts).
 */
import type { NextFunction, Request, Response } from 'express';
import express from 'express';
import { parse as parseContentType } from 'content-type';
import { ApiError } from '../../common/errors.js';
import { hasBody, refuseBody } from './route-gate.js';

/** The media type of a Content-Type header, lower case; null when absent or malformed. */
function mediaType(header: string | undefined): string | null {
  if (!header) return null;
  try {
    return parseContentType(header).type;
  } catch {
    return null;
  }
}

/** Whether a Content-Type header names JSON: `application/json` or `application/<anything>+json`. */
export function isJsonContentType(header: string | undefined): boolean {
  const type = mediaType(header);
  return type !== null && (type === 'application/json' || /^application\/[^/]+\+json$/.test(type));
}

/**
 * The refusal of a body that is not JSON (`contentType`: its header), or of none where the route
 * needs one (`contentType` undefined and no body): 400 `invalid_request`, as the document declares
 * for every route.
 */
export function notJsonBody(contentType: string | undefined, sent: boolean): ApiError {
  if (!sent)
    return new ApiError(
      'invalid_request',
      'this route takes a JSON body: send one with Content-Type: application/json',
    );
  const as = contentType === undefined ? 'without a Content-Type' : `as ${JSON.stringify(contentType)}`;
  return new ApiError(
    'invalid_request',
    `send the request body as JSON with Content-Type: application/json (it was sent ${as})`,
    'Content-Type',
  );
}

export interface JsonBodyOptions {
  /** TIMESHARE_BODY_LIMIT. */
  limit: string;
  /** Sees the raw text of each body parsed (the NUL check, nul-guard.ts). */
  verify: (req: Request, buf: Buffer) => void;
}

/** Parses the JSON body of routes that declare one; other routes never read theirs. */
export function jsonBody(options: JsonBodyOptions) {
  const parse = express.json({
    limit: options.limit,
    strict: false,
    type: (req) => isJsonContentType(req.headers['content-type']),
    verify: (req, _res, buf) => options.verify(req as Request, buf),
  });
  return (req: Request, res: Response, next: NextFunction) => {
    const entry = req.routeEntry;
    if (!entry?.body) return next();
    const contentType = req.headers['content-type'];
    if (hasBody(req) && !isJsonContentType(contentType)) {
      // Refused unread: the connection closes rather than read it through (route-gate.ts).
      refuseBody(req, res);
      return next(notJsonBody(contentType, true));
    }
    parse(req, res, (err?: unknown) => {
      if (err) return next(err);
      if (req.body === undefined && entry.bodyRequired) return next(notJsonBody(contentType, false));
      next();
    });
  };
}
