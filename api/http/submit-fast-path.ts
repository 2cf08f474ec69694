/**
 * `POST /v1/jobs` without Express. Submissions are nearly all of the API's traffic and carry its
 * throughput target; measured on this project's 2-core machine, Express 5 alone costs about
 * 0.25 ms of CPU per request over plain `node:http` (its per-request prototype swap makes Node's
 * own response code slower, then the router and `res.json`), which was a quarter of a submission's
 * whole cost. This path does what the Express stack does for this route, in the same order and
 * through the same functions: request id and log line, latency metric, authentication, rate limit,
 * body limit and JSON parsing, role check, the submitter, the one error shape.
 *
 * It takes only the form clients send: exactly `/v1/jobs`, a JSON body in UTF-8, not compressed.
 * Anything else (a trailing slash, a query string, another charset, a compressed body, another
 * content type) goes on to the Express route, which answers it the same way.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import bytes from 'bytes';
import { parse as parseContentType } from 'content-type';
import { ApiError } from '../../common/errors.js';
import { checkRole, missingCredentials, type Identify } from '../auth/middleware.js';
import { sendSubmitted, type SubmitJob } from '../jobs/submit.js';
import { sendError } from './errors.js';
import { clientAddress, rateLimited, type RateLimiter } from './rate-limit.js';
import { refuseBody } from './route-gate.js';
import { refuseNul } from './nul-guard.js';
import { beginRequest } from './request-log.js';
import type { ApiDeps } from '../deps.js';

const ROUTE = '/v1/jobs';

/**
 * An uncompressed `application/json` body in UTF-8, read with the parser body-parser uses: what
 * express.json would decode as UTF-8 (other parameters it ignores, and so does this).
 */
function isPlainJson(headers: IncomingHttpHeaders): boolean {
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;
  const header = headers['content-type'];
  if (!header) return false;
  const { type, parameters } = parseContentType(header);
  const charset = parameters.charset?.toLowerCase();
  return type === 'application/json' && (charset === undefined || charset === 'utf-8' || charset === 'utf8');
}

const tooLarge = () => new ApiError('payload_too_large', 'request body is too large');

/**
 * The parsed body as express.json({ strict: false }) gives it: undefined without a body, {} for an
 * empty one, 413 past the limit (the connection is then closed rather than read to its end).
 */
function readJson(req: IncomingMessage, res: ServerResponse, limit: number): Promise<unknown> {
  const length = req.headers['content-length'];
  if (length === undefined && req.headers['transfer-encoding'] === undefined)
    return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const refuse = () => {
      res.setHeader('Connection', 'close');
      req.pause();
      reject(tooLarge());
    };
    if (length !== undefined && Number(length) > limit) return refuse();
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      req.off('data', onData);
      refuse();
    };
    req.on('data', onData);
    req.on('error', reject);
    // A client gone before the end of its body: nothing to answer, but settle. Node reports that
    // as 'error' (aborted); 'close' is the backstop. It follows every request, so the error (and
    // its stack) is built only for a cut body: building it every time cost ~3% of the API's CPU.
    req.on('close', () => {
      if (!req.complete) reject(new ApiError('invalid_request', 'the request body was cut short'));
    });
    req.on('end', () => {
      if (size > limit) return;
      let text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      if (!text) return resolve({});
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        return reject(new ApiError('invalid_request', 'request body is not valid JSON'));
      }
      try {
        refuseNul(text, body);
      } catch (err) {
        return reject(err);
      }
      resolve(body);
    });
  });
}

/** Whether the fast path answers this request (else Express does). */
export const takesRequest = (req: Pick<IncomingMessage, 'method' | 'url' | 'headers'>): boolean =>
  req.method === 'POST' && req.url === ROUTE && isPlainJson(req.headers);

export interface FastPathParts {
  identify: Identify;
  limiter: RateLimiter;
  /** For callers without credentials (see route-gate.ts). */
  addressLimiter: RateLimiter;
  submit: SubmitJob;
}

/** A request handler that answers the submissions it takes and returns false for everything else. */
export function submitFastPath(deps: ApiDeps, parts: FastPathParts) {
  const parsedLimit = bytes.parse(deps.config.TIMESHARE_BODY_LIMIT);
  if (parsedLimit === null)
    throw new Error(`TIMESHARE_BODY_LIMIT: not a size: ${deps.config.TIMESHARE_BODY_LIMIT}`);
  const limit = parsedLimit;
  const { logger, metrics } = deps;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // The Express order: authenticate; without credentials the address limit, then 401 before the
    // body is read (route-gate.ts); rate limit, parse the body, then the route's role check.
    const principal = parts.identify(req.headers.authorization);
    if (!principal) {
      refuseBody(req, res);
      const refused = parts.addressLimiter.takeKey(clientAddress(req.socket));
      throw refused === null ? missingCredentials() : rateLimited(parts.addressLimiter, refused);
    }
    const wait = parts.limiter.take(principal);
    if (wait !== null) throw rateLimited(parts.limiter, wait);
    const body = await readJson(req, res, limit);
    const tenant = checkRole(principal, ['tenant']);
    const key = req.headers['idempotency-key'];
    sendSubmitted(res, await parts.submit(tenant.sub, body, Array.isArray(key) ? key.join(', ') : key));
  }

  return (req: IncomingMessage, res: ServerResponse): boolean => {
    if (!takesRequest(req)) return false;
    const reqId = beginRequest(logger, req, res, ROUTE);
    metrics.timeRequest(req, res, () => ROUTE);
    handle(req, res).catch((err: unknown) => sendError(res, err, logger, reqId));
    return true;
  };
}
