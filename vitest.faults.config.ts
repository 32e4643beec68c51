import { defineConfig } from 'vitest/config';

/**
 * `npm run test:faults`: faults injected into real processes (Mosquitto, the sidecar bundle, the
 * controller), each test bounded in time. Files run one at a time: they start many processes, and
 * on a 2-core machine parallel faults would mostly measure each other.
 */
export default defineConfig({
  test: {
    include: ['test/faults/**/*.fault.ts'],
    testTimeout: 240_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: false,
    globalSetup: ['test/faults/global-setup.ts'],
  },
});
