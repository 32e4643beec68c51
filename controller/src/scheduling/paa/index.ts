/** PS load balancing (paper §5.3): PAA, MXNet's default, and the load summary. */
export { assignParameters } from './assign';
export { defaultMxnetAssignment, MXNET_BIGARRAY_BOUND } from './mxnet-default';
export { summarizeAssignment } from './summary';
export { resnet50Blocks } from './resnet50';
export type { AssignedPiece, Assignment, AssignmentSummary, ParameterBlock } from './types';
