// One error class for everything the engine reports, with a stable code. The codes live in the one
// catalogue of the repository (common/errors.ts `engineErrorCatalogue`; see README "Error codes").
import { engineErrorCatalogue, type EngineErrorCode } from '../common/errors.js';

export type { EngineErrorCode };
export const ENGINE_ERROR_CODES = Object.keys(engineErrorCatalogue) as readonly EngineErrorCode[];

export class EngineError extends Error {
  override readonly name = 'EngineError';
  constructor(
    readonly code: EngineErrorCode,
    message: string,
    /** BUDGET_EXCEEDED: bytes the arena needed and its budget. STALE_FENCING_TOKEN: token given / last seen. */
    readonly needed?: number,
    readonly available?: number,
  ) {
    super(message);
  }

  /** Wraps whatever native code threw; keeps the caller's stack, which native errors lack. */
  static from(e: unknown, stack?: string): EngineError {
    if (e instanceof EngineError) return e;
    const err = e as { code?: unknown; message?: unknown; needed?: unknown; available?: unknown };
    const known = (ENGINE_ERROR_CODES as readonly string[]).includes(String(err?.code));
    const out = new EngineError(
      known ? (err.code as EngineErrorCode) : 'INTERNAL',
      typeof err?.message === 'string' ? err.message : String(e),
      typeof err?.needed === 'number' ? err.needed : undefined,
      typeof err?.available === 'number' ? err.available : undefined,
    );
    if (stack) out.stack = `EngineError: ${out.message}\n${stack.split('\n').slice(1).join('\n')}`;
    return out;
  }
}

export function invalid(message: string): EngineError {
  return new EngineError('INVALID_ARGUMENT', message);
}
