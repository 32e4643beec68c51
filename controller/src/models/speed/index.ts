/** Public API of the resource→speed model (paper §3.2). Pure: no I/O, no clock. */
export type { SpeedModel, SpeedPrediction, SpeedSample, TrainingMode } from './types';
export { fitSpeedModel } from './best-model';
export type { BestSpeedModel, FittedLaw } from './best-model';
export { fitPaperSpeedModel } from './paper-model';
export type { PaperSpeedModel, SpeedFitOptions } from './paper-model';
export { chooseSampleShapes } from './shape-chooser';
export type { ChooseShapesOptions, Shape } from './shape-chooser';
export { measuredSpeedAt, parseMeasuredSpeeds, samplesOf } from './measured-data';
export type { MeasuredData, MeasuredJob, MeasuredShape } from './measured-data';
export { evaluateSpeedModels } from './speed-eval';
export type { ErrorSummary, ModelEval, SpeedEvalOptions, SpeedEvalResult } from './speed-eval';
// All-reduce jobs (workers only, no PS), ADR 0026: speed against workers and the servers they span.
export type { AllReduceFitOptions, AllReduceSample, AllReduceSpeedModel } from './allreduce-types';
export { fitAllReduceSpeed } from './allreduce-fit';
export { ALLREDUCE_TERMS } from './allreduce-law';
export { packedServers, packedSpeed, serversSpanned } from './allreduce-placement';
export { fitPolluxThroughput, polluxStepTime } from './pollux-throughput';
export type { PolluxParams, PolluxThroughputModel } from './pollux-throughput';
export { parsePolluxPlacements, parsePolluxScalability, placementShape } from './pollux-data';
export type { AllReduceConfiguration, AllReduceData, AllReduceJob } from './pollux-data';
export { evaluateAllReduceModels } from './allreduce-eval';
export type { AllReduceEvalOptions, AllReduceEvalResult, AllReduceModelEval } from './allreduce-eval';
