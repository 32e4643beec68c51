/** How a job ends: the outcome and why. Its own file so both the port and the record can name it. */
export type JobOutcome = 'succeeded' | 'failed';

/** How a job ended, as the backend observed or recorded it. */
export interface JobEnd {
  readonly outcome: JobOutcome;
  /** A short machine-readable reason (`WorkersSucceeded`, `WorkerFailed`, `Converged`…). */
  readonly reason: string;
  readonly message: string;
}
