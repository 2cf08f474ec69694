/**
 * The one catalogue of API error codes. Every process raises `ApiError`s with these codes and the
 * HTTP layer renders them as `{"error": {"type", "code", "message", "param"}}`. Codes are a public
 * contract (clients branch on them): add new ones, never rename.
 */
export const errorCatalogue = {
  invalid_request: {
    status: 400,
    type: 'invalid_request_error',
    description: 'The request is malformed or a field is invalid; `param` names the field.',
  },
  node_protocol_unsupported: {
    status: 400,
    type: 'invalid_request_error',
    description:
      'A worker daemon spoke a node protocol version (`Timeshare-Node-Protocol`) this control plane does not accept: ' +
      'a newer one (upgrade the control plane first) or one older than it still reads; the message names the range.',
  },
  unauthorized: {
    status: 401,
    type: 'authentication_error',
    description: 'Missing, invalid, revoked or expired credentials.',
  },
  forbidden: {
    status: 403,
    type: 'permission_error',
    description: 'The credential is valid but its role may not call this route.',
  },
  not_found: {
    status: 404,
    type: 'not_found_error',
    description: "No such resource for this caller (other tenants' resources are not found either).",
  },
  method_not_allowed: {
    status: 405,
    type: 'invalid_request_error',
    description: 'The path exists but not with this method; the Allow header lists those it has.',
  },
  conflict: {
    status: 409,
    type: 'conflict_error',
    description:
      'The request conflicts with the current state (reused idempotency key, finished job, duplicate name).',
  },
  payload_too_large: {
    status: 413,
    type: 'invalid_request_error',
    description: 'The request body exceeds the configured limit.',
  },
  range_not_satisfiable: {
    status: 416,
    type: 'invalid_request_error',
    description: 'The Range header lies outside the content.',
  },
  request_header_fields_too_large: {
    status: 431,
    type: 'invalid_request_error',
    description: "The request's headers exceed the server's limit.",
  },
  quota_exceeded: {
    status: 429,
    type: 'rate_limit_error',
    description: 'A tenant quota would be exceeded; the message names the quota and its limit.',
  },
  rate_limited: {
    status: 429,
    type: 'rate_limit_error',
    description: 'Too many requests in a short time; retry after the Retry-After header.',
  },
  internal: {
    status: 500,
    type: 'api_error',
    description: 'An unexpected server error; the request id in the logs identifies it.',
  },
  unavailable: {
    status: 503,
    type: 'api_error',
    description: 'A dependency (PostgreSQL, Redis) is unavailable; retry later.',
  },
  dns_timeout: {
    status: 503,
    type: 'api_error',
    description:
      "The host of a URL in the request (a webhook's `url`) did not resolve in time, so where it points could not " +
      'be checked; `param` names the field. Retry later; a host whose DNS never answers is never accepted.',
  },
} as const;

export type ErrorCode = keyof typeof errorCatalogue;

export interface ErrorBody {
  error: { type: string; code: ErrorCode; message: string; param: string | null };
}

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly param: string | null = null,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = errorCatalogue[code].status;
  }

  toBody(): ErrorBody {
    return {
      error: {
        type: errorCatalogue[this.code].type,
        code: this.code,
        message: this.message,
        param: this.param,
      },
    };
  }
}

export const notFound = (what: string) => new ApiError('not_found', `${what} not found`);

/**
 * Device-lock error codes (common/device-lock): raised inside the scheduler, the worker and the API
 * (the lock's reads), never sent over HTTP as such. Stable: callers branch on them.
 */
export const lockErrorCatalogue = {
  LOCK_WAITER_EXISTS: 'A live waiter with this id is already queued for the devices.',
  LOCK_DEVICES_BUSY: 'The devices cannot be granted now and the caller asked not to wait.',
  LOCK_LOST: "The holder's lease lapsed or was revoked: its fencing tokens are no longer valid.",
  LOCK_WAITER_NOT_FOUND: 'No live waiter with this id (it was granted, cancelled or expired).',
  LOCK_WAITER_EXPIRED: 'The waiter missed its heartbeat and its entry expired.',
  LOCK_ACQUIRE_TIMEOUT: 'The devices were not granted within the requested timeout.',
  LOCK_ACQUIRE_ABORTED: "The caller's abort signal ended the wait.",
} as const;

export const LockErrorCode = {
  WaiterExists: 'LOCK_WAITER_EXISTS',
  DevicesBusy: 'LOCK_DEVICES_BUSY',
  LockLost: 'LOCK_LOST',
  WaiterNotFound: 'LOCK_WAITER_NOT_FOUND',
  WaiterExpired: 'LOCK_WAITER_EXPIRED',
  AcquireTimeout: 'LOCK_ACQUIRE_TIMEOUT',
  AcquireAborted: 'LOCK_ACQUIRE_ABORTED',
} as const satisfies Record<string, keyof typeof lockErrorCatalogue>;
export type LockErrorCode = keyof typeof lockErrorCatalogue;

/**
 * Engine error codes (native/): raised by the C++ engine (as string codes in native/src) and by its
 * TypeScript facade, carried by `EngineError.code`. Never sent over HTTP as such; a job that fails
 * with one reports it in its error. Stable: callers branch on them. A test checks that the C++
 * sources raise only these codes (native/test/error-codes.test.ts).
 */
export const engineErrorCatalogue = {
  INVALID_ARGUMENT:
    "Wrong type or range of an option, rollouts not of generate()'s shape, a bad shm name, or gradient-accumulation misuse.",
  BUDGET_EXCEEDED:
    'An arena allocation would exceed device.memoryBytes (`needed` and `available` carry bytes).',
  NOT_ONLOADED: 'A compute call while the engine state is offloaded.',
  STALE_FENCING_TOKEN: 'onload(token) with a token older than the last seen.',
  CORRUPT_CHECKPOINT:
    'Truncated or garbled safetensors, missing tensors, shape mismatch, bad checkpoint.json.',
  NON_FINITE: 'NaN or Inf in gradients, loss, log-probs or rollouts (the update is skipped).',
  ENGINE_BUSY: 'A second native call on an instance while one runs (the facade queues instead).',
  ENGINE_CLOSED: 'A call after close().',
  WEIGHT_SYNC_FAILED: 'The shared-memory weight segment is missing or unreadable.',
  WEIGHT_SYNC_MISMATCH: 'The shared-memory weights were published by a different model configuration.',
  BLAS_UNAVAILABLE: "gemm: 'blas' or a BLAS benchmark on a build without OpenBLAS.",
  IO_ERROR: 'A checkpoint directory or file cannot be written.',
  INTERNAL: 'Anything else (a bug).',
} as const;
export type EngineErrorCode = keyof typeof engineErrorCatalogue;
