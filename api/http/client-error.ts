/**
 * Requests Node's HTTP parser refuses before any handler sees them (headers over the limit, a
 * malformed request line or header). Node's own answer is a bare status line; ours carries the one
 * error shape, so clients parse every refusal alike.
 */
import type { Socket } from 'node:net';
import { ApiError } from '../../common/errors.js';

interface ParserError extends Error {
  code?: string;
}

function refusal(err: ParserError): ApiError {
  if (err.code === 'HPE_HEADER_OVERFLOW')
    return new ApiError('request_header_fields_too_large', 'the request headers are too large');
  return new ApiError('invalid_request', 'the request is not valid HTTP');
}

export function answerClientError(err: ParserError, socket: Socket): void {
  // A connection reset or a request cut short has no one to answer.
  if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
  const e = refusal(err);
  const body = JSON.stringify(e.toBody());
  const reason = e.status === 431 ? 'Request Header Fields Too Large' : 'Bad Request';
  socket.end(
    `HTTP/1.1 ${e.status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
