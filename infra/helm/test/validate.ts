/**
 * Validates rendered manifests offline against the Kubernetes API schemas, with kubernetes-models
 * (validators generated from Kubernetes' OpenAPI definitions, shipped on npm): each object is
 * checked by the model of its apiVersion and kind; a kind it has no model for is an error.
 */
import YAML from 'yaml';

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  [k: string]: unknown;
}

export function parseManifests(text: string): Manifest[] {
  return YAML.parseAllDocuments(text)
    .map((d) => {
      if (d.errors.length) throw new Error(d.errors.map(String).join('\n'));
      return d.toJS() as Manifest | null;
    })
    .filter((m): m is Manifest => m !== null);
}

/** Problems found in one manifest; empty when it validates. */
export async function validateManifest(m: Manifest): Promise<string[]> {
  const where = `${m.kind ?? '?'}/${m.metadata?.name ?? '?'}`;
  if (typeof m.apiVersion !== 'string' || typeof m.kind !== 'string') return [`${where}: no apiVersion/kind`];
  // core: "v1" → kubernetes-models/v1/Kind; a group: "apps/v1" → kubernetes-models/apps/v1/Kind.
  let Model: new (data: unknown) => { validate(): void };
  try {
    const mod = (await import(`kubernetes-models/${m.apiVersion}/${m.kind}`)) as Record<string, unknown>;
    Model = mod[m.kind] as typeof Model;
  } catch {
    return [`${where}: ${m.apiVersion} ${m.kind} is not a Kubernetes API kind`];
  }
  try {
    new Model(m).validate();
    return [];
  } catch (err) {
    return [`${where}: ${err instanceof Error ? err.message : String(err)}`];
  }
}
