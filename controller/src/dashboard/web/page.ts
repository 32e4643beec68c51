/** A page of the dashboard: built once, refreshed on live events, destroyed when left. */
export interface Page {
  readonly title: string;
  readonly element: HTMLElement;
  refresh(): Promise<void>;
  destroy(): void;
}
