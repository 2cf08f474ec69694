import type { ServerResponse } from 'node:http';

/** Sends `body` as JSON with the headers Express's `res.json` sets (no ETag: disabled app-wide). */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
