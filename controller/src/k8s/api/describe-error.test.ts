import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { describeError } from './api-reachability';

const api = (code: number, body: unknown) => new ApiException(code, 'message', body, {});

describe('describeError: one line per failure', () => {
  it.each([
    [api(403, '{"kind":"Status","message":"pods is forbidden"}'), 'HTTP 403: pods is forbidden'],
    [api(409, { message: 'the object has been modified' }), 'HTTP 409: the object has been modified'],
    [api(500, 'upstream connect error'), 'HTTP 500: upstream connect error'],
    [api(503, ''), 'HTTP 503'],
    [api(422, { reason: 'Invalid' }), 'HTTP 422: {"reason":"Invalid"}'],
    [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' }),
      'connect ECONNREFUSED 127.0.0.1:6443',
    ],
    [Object.assign(new Error('fetch failed'), { cause: { code: 'ENOTFOUND' } }), 'ENOTFOUND: fetch failed'],
    ['plain', 'plain'],
  ])('%s → %s', (err, line) => expect(describeError(err)).toBe(line));
});
