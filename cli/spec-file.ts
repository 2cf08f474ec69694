/**
 * Reads a job spec file. A `.json` file is read as JSON: YAML is a superset of JSON only in part
 * (it takes `{"name": "x",}`, a trailing comma JSON refuses), and a file that says it is JSON
 * should be refused by JSON's rules here, with its position, not by the API's validation later.
 * Any other file is YAML (which reads the JSON of a file not named `.json` too).
 */
import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import { CliError } from './context.js';

/** `line L, column C` of a 0-based offset, for errors that give only the offset. */
function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `line ${before.length}, column ${before[before.length - 1]!.length + 1}`;
}

function parseJson(file: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    // V8's message gives the offset (`… in JSON at position 13`); where that is, in the file's terms.
    const message = (err as Error).message;
    const at = /at position (\d+)/.exec(message);
    const where = at && !/line \d+/.test(message) ? ` (${lineAndColumn(text, Number(at[1]))})` : '';
    throw new CliError('invalid_file', `${file}: invalid JSON: ${message}${where}`);
  }
}

function parseYaml(file: string, text: string): unknown {
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length) throw new CliError('invalid_file', `${file}: ${doc.errors[0]!.message}`);
  return doc.toJS();
}

export async function readSpecFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new CliError('file_not_found', `${file}: ${(err as Error).message}`);
  }
  // An editor's byte-order mark is no syntax error (JSON.parse would say so; YAML skips it).
  text = text.replace(/^\uFEFF/, '');
  const spec = /\.json$/i.test(file) ? parseJson(file, text) : parseYaml(file, text);
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    throw new CliError('invalid_file', `${file}: a job spec is an object`);
  }
  return spec;
}
