import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { handleStopSignals, RELAY_WINDOW_MS, type StopSignal } from './stop-signals';

function setup() {
  const source = new EventEmitter();
  let now = 0;
  const seen: string[] = [];
  const off = handleStopSignals(
    {
      onStop: (s) => seen.push(`stop ${s}`),
      onForce: (s) => seen.push(`force ${s}`),
      onCrash: (e) => seen.push(`crash ${(e as Error).message}`),
      nowMs: () => now,
    },
    source,
  );
  const send = (sig: StopSignal, atMs: number) => {
    now = atMs;
    source.emit(sig);
  };
  return { source, seen, send, off };
}

describe('stop signals', () => {
  it.each([
    [
      'Ctrl-C, relayed twice by npm and tsx',
      [
        ['SIGINT', 0],
        ['SIGINT', 5],
        ['SIGINT', 40],
      ],
      ['stop SIGINT'],
    ],
    [
      'a second Ctrl-C after the relay window forces',
      [
        ['SIGINT', 0],
        ['SIGINT', RELAY_WINDOW_MS],
      ],
      ['stop SIGINT', 'force SIGINT'],
    ],
    [
      'SIGTERM then SIGINT later forces once',
      [
        ['SIGTERM', 0],
        ['SIGINT', 2000],
        ['SIGINT', 3000],
      ],
      ['stop SIGTERM', 'force SIGINT'],
    ],
    [
      'the terminal closing mid-stop never forces',
      [
        ['SIGINT', 0],
        ['SIGHUP', 5000],
      ],
      ['stop SIGINT'],
    ],
    ['SIGHUP alone stops like SIGTERM', [['SIGHUP', 0]], ['stop SIGHUP']],
  ] as [string, [StopSignal, number][], string[]][])('%s', (_name, signals, want) => {
    const { seen, send } = setup();
    for (const [sig, at] of signals) send(sig, at);
    expect(seen).toEqual(want);
  });

  it('stays installed for the whole run: listeners are never one-shot', () => {
    const { source, send } = setup();
    for (let i = 0; i < 3; i += 1) send('SIGINT', i);
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) expect(source.listenerCount(sig)).toBe(1);
  });

  it('reports an uncaught exception and an unhandled rejection as crashes; off() removes everything', () => {
    const { source, seen, off } = setup();
    source.emit('uncaughtException', new Error('boom'));
    source.emit('unhandledRejection', new Error('nope'));
    expect(seen).toEqual(['crash boom', 'crash nope']);
    off();
    expect(source.eventNames()).toEqual([]);
  });
});
