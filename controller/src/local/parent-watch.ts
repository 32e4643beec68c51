/**
 * `npm start` runs the controller under a wrapper process (tsx's CLI, which relays SIGINT and
 * SIGTERM only). A wrapper that dies another way (SIGKILL, SIGHUP sent to it alone) would leave the
 * controller, and with it every trainer and sidecar, running with nobody to stop them. So when the
 * parent is such a wrapper, its exit is handled like a signal.
 */
import { readFileSync } from 'node:fs';

/** True when process `pid`'s command line names tsx (the `npm start` / `npm run optimus` wrapper). */
export function isTsxWrapper(pid: number): boolean {
  try {
    return /[/\\]tsx[/\\]|\btsx\b/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' '));
  } catch {
    return false;
  }
}

/** Calls `onExit` once if our parent wrapper exits; returns the stop function. */
export function watchWrapperParent(onExit: () => void, everyMs = 500): () => void {
  const parent = process.ppid;
  if (!isTsxWrapper(parent)) return () => {};
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onExit();
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
