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
