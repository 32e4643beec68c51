/**
 * Runs once before the whole suite: builds the sidecar bundle that the sidecar, local-mode and
 * end-to-end tests spawn, so none of them depends on a build left over from an earlier run.
 */
import { buildSidecar } from '../sidecar/build.mjs';

export default async function setup(): Promise<void> {
  await buildSidecar();
}
