/**
 * The fault suite's set-up: the sidecar bundle (as for every suite), and the CPU contention asked for
 * with `OPTIMUS_FAULTS_CONTENTION` (harness/contention.ts), which lasts for the whole suite.
 */
import setupBundle from '../global-setup';
import { contentionLoops, startContention } from './harness/contention';

export default async function setup(): Promise<() => Promise<void>> {
  await setupBundle();
  const contention = startContention(contentionLoops(process.env['OPTIMUS_FAULTS_CONTENTION']));
  if (contention.loops > 0)
    process.stderr.write(
      `fault suite: ${contention.loops} busy loop(s) beside it (OPTIMUS_FAULTS_CONTENTION)\n`,
    );
  return () => contention.stop();
}
