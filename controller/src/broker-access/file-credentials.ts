/** Local mode: a job's credential as a file its sidecars read (`OPTIMUS_BROKER_PASSWORD_FILE`). */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskId } from '../../../shared/src/topics';
import type { CredentialStore } from './job-access';
import type { JobIdentity } from './job-identity';
import { taskUsername } from './job-identity';

export class FileCredentials implements CredentialStore {
  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  /** The password file of a job (it need not exist yet). */
  fileOf(job: { namespace: string; job: string }): string {
    return join(this.dir, `${job.namespace}__${job.job}.password`);
  }

  /** What a task's sidecar needs: its user name and its job's password file. */
  sidecarEnv(task: TaskId): Record<string, string> {
    return { OPTIMUS_BROKER_USERNAME: taskUsername(task), OPTIMUS_BROKER_PASSWORD_FILE: this.fileOf(task) };
  }

  put(job: JobIdentity, password: string): Promise<void> {
    writeFileSync(this.fileOf(job), password, { mode: 0o600 });
    return Promise.resolve();
  }

  remove(job: JobIdentity): Promise<void> {
    rmSync(this.fileOf(job), { force: true });
    return Promise.resolve();
  }
}
