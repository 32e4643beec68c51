/** How many tasks of one job a placement puts on one server (by the server's index). */
export interface ServerCount {
  readonly server: number;
  readonly ps: number;
  readonly workers: number;
}
