/** Parses API paths (`/api/v1/...`, `/apis/<group>/<version>/...`) the way the API server routes them. */
export interface ParsedPath {
  readonly group: string;
  readonly version: string;
  readonly namespace?: string;
  readonly plural: string;
  readonly name?: string;
  readonly subresource?: string;
}

export function parseApiPath(pathname: string): ParsedPath | null {
  const parts = pathname
    .split('/')
    .filter((p) => p !== '')
    .map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 2) {
    group = '';
    version = parts[1]!;
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 3) {
    group = parts[1]!;
    version = parts[2]!;
    rest = parts.slice(3);
  } else return null;
  let namespace: string | undefined;
  // `namespaces/<ns>/<plural>...` is a namespaced path; `namespaces[/<name>]` is the Namespace resource.
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [plural, name, subresource, ...extra] = rest;
  if (plural === undefined || extra.length > 0) return null;
  return {
    group,
    version,
    plural,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(subresource !== undefined ? { subresource } : {}),
  };
}
