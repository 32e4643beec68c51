// The entry of a simulation worker thread: a worker does not inherit the TypeScript loader of
// the main thread, so it registers tsx itself, then loads the worker (run-worker.ts).
import { register } from 'tsx/esm/api';

register();
await import('./run-worker.ts');
