import { afterEach, describe, expect, it, vi } from 'vitest';
import { withTimeout } from './with-timeout';

describe('withTimeout', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each([
    {
      name: 'resolves when the promise does, and leaves no timer',
      p: () => Promise.resolve(1),
      rejects: false,
    },
    {
      name: 'rejects when the promise does, and leaves no timer',
      p: () => Promise.reject(new Error('x')),
      rejects: true,
    },
  ])('$name', async ({ p, rejects }) => {
    vi.useFakeTimers();
    const run = withTimeout(p(), 10_000);
    if (rejects) await expect(run).rejects.toThrow('x');
    else await expect(run).resolves.toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('resolves after the timeout when the promise never settles', async () => {
    vi.useFakeTimers();
    let done = false;
    const run = withTimeout(new Promise(() => {}), 1000).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await run;
    expect(done).toBe(true);
  });
});
