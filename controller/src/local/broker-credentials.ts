/**
 * The embedded broker's credentials (ADR 0031): one random key per broker (a new one whenever the
 * controller starts a broker afresh; kept while the broker runs, so a controller restarted after a
 * crash and a supervised broker restart keep talking to each other), and every password derived
 * from it — HMAC-SHA256 of the user name — so the broker needs no list of users and a task's
 * password says nothing about another's.
 *
 * Files, all under `<state>/broker-access/` (0700): `key` (0600, the broker and the controller),
 * `tasks/<client id>.password` (0600, one per task: its sidecar reads it through
 * `OPTIMUS_BROKER_PASSWORD_FILE`, as the chart's sidecars read their mounted Secret), and
 * `observer.password` for monitoring subscribers. Other users of the host can read none of them.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { taskClientId, type TaskId } from '../../../shared/src/topics';
import { LOCAL_CONTROLLER_ID, OBSERVER_USERNAME } from './broker-acl';
import { writeFileDurable } from './file-store-fsync';

export const BROKER_ACCESS_DIR = 'broker-access';

export const passwordOf = (key: Buffer, username: string): string =>
  createHmac('sha256', key).update(`optimus-local-broker/v1\n${username}`).digest('base64url');

/** Constant-time check of a CONNECT's password against the one derived for its user name. */
export function passwordMatches(key: Buffer, username: string, given: Buffer | undefined): boolean {
  if (given === undefined) return false;
  const want = createHmac('sha256', key).update(passwordOf(key, username)).digest();
  const got = createHmac('sha256', key).update(given).digest();
  return timingSafeEqual(want, got);
}

/** Reads the key file (the broker process, given its path). */
export function readKey(file: string): Buffer {
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url');
  if (key.length < 32) throw new Error(`${file}: the broker key is too short`);
  return key;
}

export class LocalBrokerCredentials {
  readonly dir: string;
  readonly keyFile: string;
  private key: Buffer;

  constructor(stateDir: string) {
    this.dir = join(stateDir, BROKER_ACCESS_DIR);
    mkdirSync(join(this.dir, 'tasks'), { recursive: true, mode: 0o700 });
    this.keyFile = join(this.dir, 'key');
    this.key = existsSync(this.keyFile) ? readKey(this.keyFile) : this.renew();
  }

  /** A new key (the controller starts a new broker): every earlier password stops working. */
  renew(): Buffer {
    rmSync(join(this.dir, 'tasks'), { recursive: true, force: true });
    mkdirSync(join(this.dir, 'tasks'), { recursive: true, mode: 0o700 });
    this.key = randomBytes(32);
    writeFileDurable(this.keyFile, this.key.toString('base64url'), 0o600);
    writeFileDurable(this.observerFile, passwordOf(this.key, OBSERVER_USERNAME), 0o600);
    return this.key;
  }

  get observerFile(): string {
    return join(this.dir, 'observer.password');
  }

  /** The controller's own user name and password. */
  controller(): { username: string; password: string } {
    return { username: LOCAL_CONTROLLER_ID, password: passwordOf(this.key, LOCAL_CONTROLLER_ID) };
  }

  /** A read-only identity for monitoring subscribers and tests (any client id `optimus-observer…`). */
  observer(): { username: string; password: string } {
    return { username: OBSERVER_USERNAME, password: passwordOf(this.key, OBSERVER_USERNAME) };
  }

  /** A task's user name and password (its client id must equal the user name). */
  task(task: TaskId): { username: string; password: string } {
    const username = taskClientId(task);
    return { username, password: passwordOf(this.key, username) };
  }

  /** What a task's sidecar needs: its user name and its password file (written on first use). */
  sidecarEnv(task: TaskId): Record<string, string> {
    const { username, password } = this.task(task);
    const file = join(this.dir, 'tasks', `${username}.password`);
    if (!existsSync(file) || readFileSync(file, 'utf8') !== password) writeFileDurable(file, password, 0o600);
    return { OPTIMUS_BROKER_USERNAME: username, OPTIMUS_BROKER_PASSWORD_FILE: file };
  }
}
