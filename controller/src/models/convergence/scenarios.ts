/** The standard scenarios of `eval convergence`: curves of several shapes with known ground truth. */
import { eq1Curve, expCurve, plateauCurve, powerCurve, withLrDrop } from './synthetic';
import type { NoiseSpec, Scenario } from './synthetic';

const SPE = 100;
const REALISTIC: NoiseSpec = { relative: 0.03, autocorrelation: 0.3, outlierRate: 0.01 };
const seq2seq = { b0: 0.21, b1: 1.07, b2: 0.07 };

/** Paper-form curves (Eq. 1) at several parameter sets and noise levels, a drop, and two other shapes. */
export const STANDARD_SCENARIOS: readonly Scenario[] = [
  {
    name: 'paper-seq2seq',
    paperForm: true,
    curve: eq1Curve(seq2seq, SPE),
    rule: { stepsPerEpoch: SPE, threshold: 0.01, patience: 3 },
    pointsPerEpoch: 10,
    noise: REALISTIC,
  },
  {
    name: 'paper-fast',
    paperForm: true,
    curve: eq1Curve({ b0: 0.8, b1: 1, b2: 0.15 }, SPE),
    rule: { stepsPerEpoch: SPE, threshold: 0.005, patience: 3 },
    pointsPerEpoch: 5,
    noise: REALISTIC,
  },
  {
    name: 'paper-slow',
    paperForm: true,
    curve: eq1Curve({ b0: 0.05, b1: 1, b2: 0.3 }, SPE),
    rule: { stepsPerEpoch: SPE, threshold: 0.002, patience: 5 },
    pointsPerEpoch: 4,
    noise: REALISTIC,
  },
  {
    name: 'paper-clean',
    paperForm: true,
    curve: eq1Curve(seq2seq, SPE),
    rule: { stepsPerEpoch: SPE, threshold: 0.005, patience: 3 },
    pointsPerEpoch: 10,
    noise: { relative: 0.01, autocorrelation: 0, outlierRate: 0 },
  },
  {
    name: 'paper-noisy',
    paperForm: true,
    curve: eq1Curve({ b0: 0.3, b1: 1, b2: 0.1 }, SPE),
    rule: { stepsPerEpoch: SPE, threshold: 0.01, patience: 3 },
    pointsPerEpoch: 10,
    noise: { relative: 0.08, autocorrelation: 0.5, outlierRate: 0.02 },
  },
  {
    name: 'lr-drop',
    paperForm: false,
    family: 'lr-drop',
    curve: withLrDrop(eq1Curve(seq2seq, SPE), { atEpoch: 8, factor: 0.6, b0: 0.6, floorShare: 0.3 }, SPE),
    rule: { stepsPerEpoch: SPE, threshold: 0.005, patience: 3 },
    pointsPerEpoch: 10,
    noise: REALISTIC,
  },
  {
    name: 'power-law',
    paperForm: false,
    family: 'power-law',
    curve: powerCurve({ a: 1, tau: 2, p: 0.5, floor: 0.1 }, SPE),
    rule: { stepsPerEpoch: SPE, threshold: 0.005, patience: 3 },
    pointsPerEpoch: 10,
    noise: REALISTIC,
  },
  {
    name: 'exponential',
    paperForm: false,
    family: 'exponential',
    curve: expCurve({ a: 0.9, tau: 8, floor: 0.1 }, SPE),
    rule: { stepsPerEpoch: SPE, threshold: 0.01, patience: 3 },
    pointsPerEpoch: 10,
    noise: REALISTIC,
  },
  {
    name: 'lr-drop-late',
    paperForm: false,
    family: 'lr-drop',
    curve: withLrDrop(
      eq1Curve({ b0: 0.4, b1: 1, b2: 0.1 }, SPE),
      { atEpoch: 15, factor: 0.7, b0: 0.4, floorShare: 0.5 },
      SPE,
    ),
    rule: { stepsPerEpoch: SPE, threshold: 0.004, patience: 3 },
    pointsPerEpoch: 8,
    noise: REALISTIC,
  },
  {
    name: 'exponential-slow',
    paperForm: false,
    family: 'exponential',
    curve: expCurve({ a: 0.8, tau: 20, floor: 0.2 }, SPE),
    rule: { stepsPerEpoch: SPE, threshold: 0.005, patience: 3 },
    pointsPerEpoch: 8,
    noise: REALISTIC,
  },
  {
    name: 'plateau',
    paperForm: false,
    family: 'plateau',
    curve: plateauCurve(seq2seq, 3, SPE),
    rule: { stepsPerEpoch: SPE, threshold: 0.01, patience: 3 },
    pointsPerEpoch: 10,
    noise: REALISTIC,
  },
  {
    name: 'plateau-long',
    paperForm: false,
    family: 'plateau',
    curve: plateauCurve({ b0: 0.5, b1: 1, b2: 0.1 }, 6, SPE),
    rule: { stepsPerEpoch: SPE, threshold: 0.005, patience: 3 },
    pointsPerEpoch: 8,
    noise: REALISTIC,
  },
];
