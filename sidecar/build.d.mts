/** Absolute path of the bundle the build writes. */
export declare const SIDECAR_BUNDLE: string;
/** The benchmark's stages (`bench:sidecar --stage`); `full` is the shipped sidecar. */
export type BenchStage = 'full' | 'transport' | 'transport-no-outbox';
export declare const BENCH_STAGES: Record<BenchStage, { outbox: boolean } | null>;
/** Where a stage's bundle is written (the shipped bundle for `full`). */
export declare function stageBundle(stage: BenchStage): string;
/**
 * Builds `sidecar/dist/sidecar.cjs` (or a benchmark stage's bundle beside it); resolves with its size
 * in bytes (throws above 500 KB).
 */
export declare function buildSidecar(stage?: BenchStage): Promise<number>;
/** Node flags the sidecar runs with (also in the Dockerfile). */
export declare const NODE_FLAGS: string[];
