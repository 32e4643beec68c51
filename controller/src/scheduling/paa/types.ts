/** Parameter blocks and their assignment to parameter servers (paper §5.3). */

/** One parameter array of a model (MXNet: one key of the kvstore). Size in parameters. */
export interface ParameterBlock {
  readonly name: string;
  readonly size: number;
}

/** A contiguous piece of a block on one PS; one push/pull request per piece per step. */
export interface AssignedPiece {
  readonly block: string;
  readonly offset: number;
  readonly size: number;
  readonly server: number;
}

export interface Assignment {
  readonly ps: number;
  readonly pieces: readonly AssignedPiece[];
}

/** Load of each PS and the spread across PS. */
export interface AssignmentSummary {
  readonly ps: number;
  /** Parameters assigned to each PS. */
  readonly sizes: readonly number[];
  /** Update requests each PS receives per step (one per piece). */
  readonly requests: readonly number[];
  readonly maxSize: number;
  readonly minSize: number;
  readonly maxRequests: number;
  readonly minRequests: number;
}
