/** The line a task process prints on stdout once it runs (the local mode's "pod is Running"). */
export const READY_LINE = 'optimus-ready';
