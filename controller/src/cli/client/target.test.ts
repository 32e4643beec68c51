import { describe, expect, it } from 'vitest';
import { resolveTarget, type TargetInput } from './target';

const files =
  (m: Record<string, string>): TargetInput['readFile'] =>
  (p) =>
    m[p] ?? null;

describe('resolveTarget: --url, else OPTIMUS_URL, else the local run; the token from the env, a file, or the local run', () => {
  const cases: { name: string; input: TargetInput; want: ReturnType<typeof resolveTarget> }[] = [
    {
      name: 'nothing set: the local mode, no token',
      input: { env: {}, readFile: files({}) },
      want: { url: 'http://127.0.0.1:8080', token: null, tokenSource: null },
    },
    {
      name: 'the local run wrote its token',
      input: { env: {}, readFile: files({ '.optimus/local/api-token': 'tok\n' }) },
      want: {
        url: 'http://127.0.0.1:8080',
        token: 'tok',
        tokenSource: "the local run's .optimus/local/api-token",
      },
    },
    {
      name: 'OPTIMUS_URL and OPTIMUS_API_TOKEN_FILE',
      input: {
        env: { OPTIMUS_URL: 'http://localhost:18080/', OPTIMUS_API_TOKEN_FILE: '/run/t' },
        readFile: files({ '/run/t': 'filetok', '.optimus/local/api-token': 'local' }),
      },
      want: {
        url: 'http://localhost:18080',
        token: 'filetok',
        tokenSource: 'OPTIMUS_API_TOKEN_FILE (/run/t)',
      },
    },
    {
      name: '--url over OPTIMUS_URL; OPTIMUS_API_TOKEN over the file',
      input: {
        url: 'https://optimus.example.org/base/',
        env: { OPTIMUS_URL: 'http://x:1', OPTIMUS_API_TOKEN: 'envtok', OPTIMUS_API_TOKEN_FILE: '/run/t' },
        readFile: files({ '/run/t': 'filetok' }),
      },
      want: { url: 'https://optimus.example.org/base', token: 'envtok', tokenSource: 'OPTIMUS_API_TOKEN' },
    },
  ];
  for (const c of cases) it(c.name, () => expect(resolveTarget(c.input)).toEqual(c.want));

  it('a token file named but missing or empty is an error that names it', () => {
    expect(() => resolveTarget({ env: { OPTIMUS_API_TOKEN_FILE: '/nope' }, readFile: files({}) })).toThrow(
      'OPTIMUS_API_TOKEN_FILE: no file /nope',
    );
    expect(() =>
      resolveTarget({ env: { OPTIMUS_API_TOKEN_FILE: '/e' }, readFile: files({ '/e': ' \n' }) }),
    ).toThrow('OPTIMUS_API_TOKEN_FILE: /e is empty');
  });

  it('refuses a URL that is not http(s)', () => {
    expect(() => resolveTarget({ env: { OPTIMUS_URL: 'ftp://x' }, readFile: files({}) })).toThrow(
      'OPTIMUS_URL must be an http:// or https:// URL, got "ftp://x"',
    );
  });
});
