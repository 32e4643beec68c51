/** Absolute path of the bundle the build writes. */
export declare const SIDECAR_BUNDLE: string;
/** Builds `sidecar/dist/sidecar.cjs`; resolves with its size in bytes (throws above 500 KB). */
export declare function buildSidecar(): Promise<number>;
/** Node flags the sidecar runs with (also in the Dockerfile). */
export declare const NODE_FLAGS: string[];
