/** Output helpers: `--json` prints the API's objects as they are; otherwise tables and lines. */
import Table from 'cli-table3';
import { TimeshareError } from '../sdk/src/index.js';
import { CliError, type Context } from './context.js';

export function emit(ctx: Context, data: unknown, human: () => void): void {
  if (ctx.json) console.log(JSON.stringify(data, null, 2));
  else human();
}

export function table(head: string[], rows: (string | number | null | undefined)[][]): string {
  const t = new Table({ head, style: { head: [], border: [] } });
  for (const r of rows) t.push(r.map((v) => (v === null || v === undefined ? '-' : String(v))));
  return t.toString();
}

/** An error that is neither the API's nor the CLI's own: it has no code to show beside its message. */
const UNCLASSIFIED = 'error';

/**
 * One line on stderr, `error: <code>: <message> (field: <param>)` — or `error: <message>` for an
 * unclassified error, whose code would only repeat the prefix — and with --json the same as an
 * `{"error": …}` object on stdout; exit code 1.
 */
export function reportError(err: unknown, json: boolean): number {
  let body: { code: string; message: string; param?: string | null; status?: number };
  if (err instanceof TimeshareError) {
    body = { code: err.code, message: err.message, param: err.param, status: err.status };
  } else if (err instanceof CliError) {
    body = { code: err.code, message: err.message };
  } else if (err instanceof TypeError && /fetch failed/.test(err.message)) {
    const cause = (err as { cause?: { message?: string } }).cause?.message;
    body = { code: 'unreachable', message: `cannot reach the API${cause ? `: ${cause}` : ''}` };
  } else {
    body = { code: UNCLASSIFIED, message: err instanceof Error ? err.message : String(err) };
  }
  if (json) console.log(JSON.stringify({ error: body }, null, 2));
  const code = body.code === UNCLASSIFIED ? '' : `${body.code}: `;
  const field = body.param ? ` (field: ${body.param})` : '';
  console.error(`error: ${code}${body.message}${field}`);
  return 1;
}
