import { describe, expect, it } from 'vitest';
import { parseLossCsv } from './loss-csv';

describe('parseLossCsv', () => {
  it.each([
    [
      'plain',
      'step,loss\n0,2.5\n10,2.0\n',
      [
        { step: 0, loss: 2.5 },
        { step: 10, loss: 2 },
      ],
      0,
    ],
    [
      'columns in any order, extra columns, CRLF',
      'epoch,loss,step\r\n0,2.5,0\r\n0,2.0,10\r\n',
      [
        { step: 0, loss: 2.5 },
        { step: 10, loss: 2 },
      ],
      0,
    ],
    [
      'bad rows counted and skipped',
      'step,loss\n0,2.5\nx,1\n5,\n-1,2\n10,2\n',
      [
        { step: 0, loss: 2.5 },
        { step: 10, loss: 2 },
      ],
      3,
    ],
    ['blank lines ignored', '\nstep,loss\n\n0,1\n', [{ step: 0, loss: 1 }], 0],
  ])('%s', (_name, text, points, rejected) => {
    const parsed = parseLossCsv(text);
    expect(parsed.points).toEqual(points);
    expect(parsed.rejected).toBe(rejected);
  });

  it('names the missing column', () => {
    expect(() => parseLossCsv('iteration,value\n1,2\n')).toThrow(/"step" and "loss"/);
  });
});
