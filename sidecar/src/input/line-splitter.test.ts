import { describe, expect, it } from 'vitest';
import { LineSplitter } from './line-splitter';

const split = (
  parts: (string | Buffer)[],
  maxLineBytes = 64,
): { lines: string[]; pending: number; long: number } => {
  const lines: string[] = [];
  const s = new LineSplitter({ maxLineBytes, onLine: (l) => lines.push(l) });
  for (const p of parts) s.push(typeof p === 'string' ? Buffer.from(p) : p);
  return { lines, pending: s.pendingBytes, long: s.longLines };
};

describe('LineSplitter', () => {
  it.each([
    ['LF', ['a\nb\n'], ['a', 'b']],
    ['CRLF', ['a\r\nb\r\n'], ['a', 'b']],
    ['CR redraws', ['10%\r20%\r30%\n'], ['10%', '20%', '30%']],
    ['backspace erasing', ['abc\b\b\bxyz\n'], ['abc', 'xyz']],
    ['ANSI colours and cursor codes', ['\x1b[32mINFO\x1b[0m x\x1b[2K\n'], ['INFO x']],
    ['a line split across reads', ['Epoch[0] Ba', 'tch [1]\n'], ['Epoch[0] Batch [1]']],
    [
      'a multi-byte character split across reads',
      [Buffer.from([0xe2, 0x94]), Buffer.from([0x81, 0x0a])],
      ['━'],
    ],
    ['invalid UTF-8 becomes U+FFFD', [Buffer.from([0x61, 0xff, 0x62, 0x0a])], ['a\ufffdb']],
  ])('%s', (_name, parts, expected) => {
    expect(split(parts).lines).toEqual(expected);
  });

  it('keeps an unterminated last line pending, then emits it on flush', () => {
    const lines: string[] = [];
    const s = new LineSplitter({ maxLineBytes: 64, onLine: (l) => lines.push(l) });
    s.push(Buffer.from('a\npartial'));
    expect(lines).toEqual(['a']);
    expect(s.pendingBytes).toBe(7);
    s.flushPartial();
    expect(lines).toEqual(['a', 'partial']);
  });

  it('cuts long lines (within one read and across reads) and counts them', () => {
    const r = split(['x'.repeat(100) + '\n', 'y'.repeat(40), 'y'.repeat(40), '\nok\n'], 32);
    expect(r.lines).toEqual(['x'.repeat(32), 'y'.repeat(32), 'ok']);
    expect(r.long).toBe(2);
  });
});
