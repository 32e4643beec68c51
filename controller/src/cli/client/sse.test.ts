import { describe, expect, it } from 'vitest';
import { SseParser } from './sse';

describe('SseParser (text/event-stream)', () => {
  const cases: { name: string; chunks: string[]; want: { event: string; data: string }[] }[] = [
    {
      name: 'one message',
      chunks: ['event: job\ndata: {"a":1}\n\n'],
      want: [{ event: 'job', data: '{"a":1}' }],
    },
    {
      name: 'split anywhere, CRLF line ends',
      chunks: ['event: deci', 'sion\r', '\ndata: x\r\n', '\r\nevent: job\ndata: y\n', '\n'],
      want: [
        { event: 'decision', data: 'x' },
        { event: 'job', data: 'y' },
      ],
    },
    {
      name: 'no event field is "message"; data lines join',
      chunks: ['data: a\ndata: b\n\n'],
      want: [{ event: 'message', data: 'a\nb' }],
    },
    { name: 'comments and empty messages are skipped', chunks: [': ping\n\nevent: x\n\n'], want: [] },
    { name: 'an unfinished message waits', chunks: ['event: job\ndata: 1\n'], want: [] },
  ];
  for (const c of cases)
    it(c.name, () => {
      const p = new SseParser();
      expect(c.chunks.flatMap((ch) => p.push(ch))).toEqual(c.want);
    });
});
