/** Load per PS of an assignment: parameters and requests, and their max/min. */
import type { Assignment, AssignmentSummary } from './types';

export function summarizeAssignment(assignment: Assignment): AssignmentSummary {
  const sizes = new Array<number>(assignment.ps).fill(0);
  const requests = new Array<number>(assignment.ps).fill(0);
  for (const p of assignment.pieces) {
    sizes[p.server] = (sizes[p.server] ?? 0) + p.size;
    requests[p.server] = (requests[p.server] ?? 0) + 1;
  }
  return {
    ps: assignment.ps,
    sizes,
    requests,
    maxSize: Math.max(...sizes),
    minSize: Math.min(...sizes),
    maxRequests: Math.max(...requests),
    minRequests: Math.min(...requests),
  };
}
