/**
 * The local mode's API token (ADR 0031): a new random one per run (unless OPTIMUS_API_TOKEN_FILE
 * gives one), written where tools find it — `<state>/api-token`, 0600 — and handed to the browser
 * in the dashboard link's fragment (`#token=…`), which never reaches a server, a log or a Referer.
 * The `optimus` CLI reads OPTIMUS_API_TOKEN, else OPTIMUS_API_TOKEN_FILE, else this file.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { writeFileDurable } from './file-store-fsync';

export const API_TOKEN_FILE = 'api-token';

export const newApiToken = (): string => randomBytes(32).toString('base64url');

/** Writes the run's token to `<stateDir>/api-token` (0600) and returns the file's path. */
export function writeApiToken(stateDir: string, token: string): string {
  const file = join(stateDir, API_TOKEN_FILE);
  writeFileDurable(file, `${token}\n`, 0o600);
  return file;
}

/** The dashboard's address with the token in its fragment (read once by the page, then removed). */
export const dashboardLink = (apiUrl: string, token: string): string =>
  `${apiUrl}/dashboard/#token=${encodeURIComponent(token)}`;
