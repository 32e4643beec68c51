/**
 * Which controller the client commands talk to, and with which bearer token: `--url`, else
 * `OPTIMUS_URL`, else the local mode's default; the token from `OPTIMUS_API_TOKEN`, else the file
 * named by `OPTIMUS_API_TOKEN_FILE`, else the file the local mode writes (`.optimus/local/api-token`),
 * else none. Pure apart from the file reader passed in.
 */
import { UsageError } from '../output';

/** Where `npm start` serves its API. */
export const DEFAULT_URL = 'http://127.0.0.1:8080';
/** The token file the local mode writes in its state directory (relative to the working directory). */
export const LOCAL_TOKEN_FILE = '.optimus/local/api-token';

export interface Target {
  /** Base URL without a trailing slash. */
  readonly url: string;
  readonly token: string | null;
  /** Where the token came from, in words for a hint ("OPTIMUS_API_TOKEN", "the file …"); null: none sent. */
  readonly tokenSource: string | null;
}

export interface TargetInput {
  readonly url?: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The file's text, or null when it does not exist; throws on other errors. */
  readonly readFile: (path: string) => string | null;
}

export function resolveTarget(i: TargetInput): Target {
  const url = baseUrl(
    i.url ?? nonEmpty(i.env['OPTIMUS_URL']) ?? DEFAULT_URL,
    i.url ? '--url' : 'OPTIMUS_URL',
  );
  const fromEnv = nonEmpty(i.env['OPTIMUS_API_TOKEN']);
  if (fromEnv) return { url, token: fromEnv.trim(), tokenSource: 'OPTIMUS_API_TOKEN' };
  const file = nonEmpty(i.env['OPTIMUS_API_TOKEN_FILE']);
  if (file) {
    const token = readToken(i.readFile, file, 'OPTIMUS_API_TOKEN_FILE');
    if (token === null) throw new Error(`OPTIMUS_API_TOKEN_FILE: no file ${file}`);
    return { url, token, tokenSource: `OPTIMUS_API_TOKEN_FILE (${file})` };
  }
  const local = readToken(i.readFile, LOCAL_TOKEN_FILE, LOCAL_TOKEN_FILE);
  return local === null
    ? { url, token: null, tokenSource: null }
    : { url, token: local, tokenSource: `the local run's ${LOCAL_TOKEN_FILE}` };
}

const nonEmpty = (s: string | undefined): string | undefined => (s && s.trim() !== '' ? s : undefined);

function baseUrl(raw: string, from: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UsageError(`${from} must be an http:// or https:// URL, got "${raw}"`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new UsageError(`${from} must be an http:// or https:// URL, got "${raw}"`);
  return u.href.replace(/\/+$/, '');
}

function readToken(read: TargetInput['readFile'], path: string, what: string): string | null {
  let text: string | null;
  try {
    text = read(path);
  } catch (err) {
    throw new Error(`${what}: cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (text === null) return null;
  const token = text.trim();
  if (token === '') throw new Error(`${what}: ${path} is empty`);
  return token;
}
