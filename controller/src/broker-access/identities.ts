/**
 * The port through which the controller creates and removes broker identities, and its Mosquitto
 * implementation (dynamic-security plugin). Idempotent and minimal: what the broker has is read first
 * and only what differs is changed, because Mosquitto disconnects every client whose user or role is
 * modified — re-applying the same state on every reconnect must not kick a whole job's sidecars.
 */
import { createHash } from 'node:crypto';
import type { DynsecClient, DynsecCommand, DynsecResponse } from './dynsec-client';
import {
  controllerAcls,
  CONTROLLER_ROLE,
  jobAcls,
  jobRoleName,
  jobTasks,
  taskUsername,
  type Acl,
  type JobIdentity,
} from './job-identity';

export interface BrokerIdentities {
  /** The controller's own rights and the broker's default (deny). */
  ensureController(): Promise<void>;
  /** A role for the job and one bound identity per task, all with `password`. */
  ensureJob(job: JobIdentity, password: string): Promise<void>;
  removeJob(job: JobIdentity): Promise<void>;
}

/** For brokers the controller does not administer (the embedded one, an external one). */
export const NO_IDENTITIES: BrokerIdentities = {
  ensureController: () => Promise.resolve(),
  ensureJob: () => Promise.resolve(),
  removeJob: () => Promise.resolve(),
};

const DENY_BY_DEFAULT = [
  { acltype: 'publishClientSend', allow: false },
  { acltype: 'publishClientReceive', allow: false },
  { acltype: 'subscribe', allow: false },
  { acltype: 'unsubscribe', allow: true },
] as const;

interface RoleData {
  acls?: { acltype?: string; topic?: string; allow?: boolean }[];
}
interface ClientData {
  clientid?: string;
  textname?: string;
  roles?: { rolename?: string }[];
}

const aclKey = (a: { acltype?: string; topic?: string; allow?: boolean }): string =>
  `${a.acltype ?? ''} ${a.topic ?? ''} ${String(a.allow)}`;
const sameAcls = (have: RoleData['acls'], want: readonly Acl[]): boolean =>
  [...(have ?? [])].map(aclKey).sort().join('\n') === want.map(aclKey).sort().join('\n');
/** Stored in the client's text name: the only way to tell later whether its password is still the wanted one. */
const fingerprint = (password: string): string =>
  `optimus task identity; password ${createHash('sha256').update(password).digest('hex').slice(0, 16)}`;

export class DynsecIdentities implements BrokerIdentities {
  constructor(
    private readonly dynsec: DynsecClient,
    private readonly controllerUsername: string,
  ) {}

  async ensureController(): Promise<void> {
    const [defaults, role, me] = await this.dynsec.exec([
      { command: 'getDefaultACLAccess' },
      { command: 'getRole', rolename: CONTROLLER_ROLE },
      { command: 'getClient', username: this.controllerUsername },
    ]);
    const todo: DynsecCommand[] = [];
    const haveDefaults = (defaults?.data?.['acls'] ?? []) as { acltype?: string; allow?: boolean }[];
    if (
      DENY_BY_DEFAULT.some((d) => !haveDefaults.some((h) => h.acltype === d.acltype && h.allow === d.allow))
    )
      todo.push({ command: 'setDefaultACLAccess', acls: DENY_BY_DEFAULT });
    todo.push(...this.roleCommands(CONTROLLER_ROLE, role, controllerAcls()));
    await this.run(todo, []);
    const roles = ((me?.data?.['client'] as ClientData | undefined)?.roles ?? []).map((r) => r.rolename);
    // Last, unanswered: Mosquitto disconnects us when our own user changes (once: the bridge
    // reconnects, and the role is there from then on).
    if (!roles.includes(CONTROLLER_ROLE))
      this.dynsec.send([
        { command: 'addClientRole', username: this.controllerUsername, rolename: CONTROLLER_ROLE },
      ]);
  }

  async ensureJob(job: JobIdentity, password: string): Promise<void> {
    const rolename = jobRoleName(job);
    const users = jobTasks(job).map(taskUsername);
    const [role, ...clients] = await this.dynsec.exec([
      { command: 'getRole', rolename },
      ...users.map((username) => ({ command: 'getClient', username })),
    ]);
    const want = (username: string) => ({
      username,
      password,
      // The broker refuses this user under any other client id: no one takes over another session.
      clientid: username,
      textname: fingerprint(password),
      roles: [{ rolename }],
    });
    const todo: DynsecCommand[] = this.roleCommands(rolename, role, jobAcls(job));
    users.forEach((username, i) => {
      const have = clients[i]?.data?.['client'] as ClientData | undefined;
      if (have === undefined) todo.push({ command: 'createClient', ...want(username) });
      else if (
        have.clientid !== username ||
        have.textname !== fingerprint(password) ||
        have.roles?.length !== 1 ||
        have.roles[0]?.rolename !== rolename
      )
        todo.push({ command: 'modifyClient', ...want(username) });
    });
    await this.run(todo, []);
  }

  async removeJob(job: JobIdentity): Promise<void> {
    await this.run(
      [
        ...jobTasks(job).map((t) => ({ command: 'deleteClient', username: taskUsername(t) })),
        { command: 'deleteRole', rolename: jobRoleName(job) },
      ],
      ['not found'],
    );
  }

  private roleCommands(
    rolename: string,
    have: DynsecResponse | undefined,
    acls: readonly Acl[],
  ): DynsecCommand[] {
    const data = have?.data?.['role'] as RoleData | undefined;
    if (data === undefined) return [{ command: 'createRole', rolename, acls }];
    return sameAcls(data.acls, acls) ? [] : [{ command: 'modifyRole', rolename, acls }];
  }

  private async run(commands: DynsecCommand[], ok: string[]): Promise<void> {
    if (commands.length === 0) return;
    const bad = (await this.dynsec.exec(commands)).filter(
      (r) => r.error !== undefined && !ok.some((s) => r.error?.toLowerCase().includes(s) === true),
    );
    if (bad.length > 0)
      throw new Error(
        `dynamic security refused: ${bad.map((r) => `${r.command}: ${r.error ?? '?'}`).join('; ')}`,
      );
  }
}
