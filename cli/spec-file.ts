/** Reads a job spec file: YAML or JSON (YAML is a superset, so one parser reads both). */
import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import { CliError } from './context.js';

export async function readSpecFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new CliError('file_not_found', `${file}: ${(err as Error).message}`);
  }
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length) throw new CliError('invalid_file', `${file}: ${doc.errors[0]!.message}`);
  const spec = doc.toJS();
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    throw new CliError('invalid_file', `${file}: a job spec is an object`);
  }
  return spec;
}
