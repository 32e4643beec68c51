/** `metav1.Status` bodies, the API server's error format. */
export function statusBody(
  code: number,
  reason: string,
  message: string,
  details?: unknown,
): Record<string, unknown> {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: code < 400 ? 'Success' : 'Failure',
    message,
    reason,
    ...(details !== undefined ? { details } : {}),
    code,
  };
}
