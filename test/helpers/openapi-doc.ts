/**
 * The API's own OpenAPI document as a test oracle: which operations exist, which statuses each
 * declares, and whether a response body conforms to the schema declared for its status.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import * as formats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

type AddFormats = (ajv: Ajv2020) => unknown;
// ajv-formats is CommonJS: under ESM its function arrives as `default`, sometimes twice wrapped.
const addFormats = ((formats as unknown as { default: { default?: AddFormats } }).default.default ??
  (formats as unknown as { default: AddFormats }).default) as AddFormats;

export interface Operation {
  method: string;
  /** The template, `/v1/jobs/{id}`. */
  path: string;
  op: OperationObject;
}

export interface OperationObject {
  operationId: string;
  tags?: string[];
  description?: string;
  security?: unknown[];
  parameters?: { name: string; in: string; required?: boolean; schema?: Record<string, unknown> }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<
    string,
    { description: string; content?: Record<string, { schema?: Record<string, unknown> }> }
  >;
}

export interface ApiDocument {
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Record<string, Record<string, unknown>> };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const pointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

export class DocumentOracle {
  readonly operations: Operation[];
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly matchers: { re: RegExp; path: string }[];

  constructor(readonly doc: ApiDocument) {
    this.operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      METHODS.filter((m) => item[m]).map((method) => ({ method, path, op: item[method]! })),
    );
    this.ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: 'doc', ...doc });
    this.matchers = Object.keys(doc.paths).map((path) => ({
      path,
      re: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+').replace(/\./g, '\\.')}/?$`, 'i'),
    }));
  }

  /** The template of a concrete path (`/v1/jobs/abc` → `/v1/jobs/{id}`), or null. */
  templateOf(path: string): string | null {
    const bare = path.split('?')[0]!;
    return this.matchers.find((m) => m.re.test(bare))?.path ?? null;
  }

  statusesOf(method: string, path: string): string[] {
    return Object.keys(this.doc.paths[path]?.[method.toLowerCase()]?.responses ?? {});
  }

  /**
   * Why a response does not match the document for this operation, or null when it does: its status
   * must be declared (405: on some operation of the path) and a JSON body must fit the schema.
   */
  mismatch(method: string, path: string, status: number, contentType: string | undefined, body: unknown) {
    const item = this.doc.paths[path];
    if (!item) return `no path ${path}`;
    const m = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
    const op = item[m];
    // A method the path lacks is refused before any route (401, 405, 429, 431…): statuses every
    // operation of the path declares.
    const declaredOn = op ?? Object.values(item)[0];
    const response = declaredOn?.responses[String(status)];
    if (!response) return `${method} ${path}: status ${status} is not documented`;
    if (method.toLowerCase() === 'head' || !contentType?.startsWith('application/json')) return null;
    if (!response.content?.['application/json']) return `${method} ${path} ${status}: JSON is not documented`;
    const key = `${op ? m : Object.keys(item)[0]} ${path} ${status}`;
    let validate = this.validators.get(key);
    if (!validate) {
      const ref = `doc#/paths/${pointer(path)}/${op ? m : Object.keys(item)[0]}/responses/${status}/content/application~1json/schema`;
      validate = this.ajv.compile({ $ref: ref });
      this.validators.set(key, validate);
    }
    if (validate(body)) return null;
    return `${method} ${path} ${status}: body does not fit the schema: ${this.ajv.errorsText(validate.errors)} in ${JSON.stringify(body).slice(0, 300)}`;
  }
}
