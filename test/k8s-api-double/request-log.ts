/** What the double records about each request: enough to check RBAC coverage (group, resource, verb). */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly group: string;
  /** `plural` or `plural/subresource`, as RBAC names it. */
  readonly resource: string;
  /** The RBAC verb: get, list, watch, create, update, patch, delete. */
  readonly verb: string;
  readonly namespace?: string;
  readonly contentType?: string;
  /** The bearer token: tells the controller's calls from a test's own. */
  readonly user: string;
  readonly query: string;
  readonly status: number;
}

/** Maps an HTTP request on a resource path to its RBAC verb, as the API server's authorizer does. */
export function rbacVerb(method: string, hasName: boolean, watch: boolean): string {
  switch (method) {
    case 'GET':
      return watch ? 'watch' : hasName ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return hasName ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}
