import { describe, expect, it } from 'vitest';
import { ClientError, type ApiClient } from './api-client';
import type { SseMessage } from './sse';
import { watch } from './watch';

/** A client whose event stream is absent (404: `null`) or yields the given messages then ends. */
const clientWith = (events: (signal: AbortSignal) => Promise<AsyncGenerator<SseMessage> | null>) =>
  ({ events }) as unknown as ApiClient;

function recorder(frames: (() => string)[], stopAfterPrints: number) {
  const ac = new AbortController();
  const printed: string[] = [];
  const warned: string[] = [];
  let i = 0;
  return {
    printed,
    warned,
    options: {
      signal: ac.signal,
      pollMs: 5,
      idleMs: 5,
      settleMs: 0,
      frame: async () => frames[Math.min(i++, frames.length - 1)]!(),
      print: (f: string) => {
        printed.push(f);
        if (printed.length >= stopAfterPrints) ac.abort();
      },
      warn: (m: string) => warned.push(m),
    },
  };
}

describe('watch', () => {
  it('without an event stream, polls and prints only what changed', async () => {
    const r = recorder([() => 'a', () => 'a', () => 'a', () => 'b'], 2);
    await watch({ ...r.options, client: clientWith(async () => null) });
    expect(r.printed).toEqual(['a', 'b']);
    expect(r.warned).toEqual(['this controller has no live event stream: polling every 0.005 s']);
  });

  it('waits out a controller that went away, saying so once, and says when it is back', async () => {
    const gone = () => {
      throw new ClientError('cannot reach the controller at http://x', null, true);
    };
    const r = recorder([() => 'a', gone, gone, gone, () => 'b'], 2);
    await watch({ ...r.options, client: clientWith(async () => null) });
    expect(r.printed).toEqual(['a', 'b']);
    expect(r.warned.slice(1)).toEqual([
      'cannot reach the controller at http://x — retrying every 0.005 s (Ctrl-C to stop)',
      'controller reachable again',
    ]);
  });

  it('ends with an answer that waiting will not change (a 404, a 401)', async () => {
    const r = recorder(
      [
        () => {
          throw new ClientError('no job default/x', 404, false);
        },
      ],
      1,
    );
    await expect(watch({ ...r.options, client: clientWith(async () => null) })).rejects.toThrow(
      'no job default/x',
    );
  });

  it('a live event stream makes it load again at once (the safety poll is far off)', async () => {
    let n = 0;
    async function* stream(signal: AbortSignal): AsyncGenerator<SseMessage> {
      yield { event: 'hello', data: '{}' };
      yield { event: 'job', data: '{}' };
      // Stays open until the watch ends, as the controller's stream does.
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
    }
    const r = recorder([() => `frame ${n++}`], 2);
    await watch({ ...r.options, idleMs: 3_600_000, client: clientWith(async (signal) => stream(signal)) });
    expect(r.printed).toEqual(['frame 0', 'frame 1']);
    expect(r.warned).toEqual([]);
  });
});
