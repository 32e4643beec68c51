/** MQTT over TLS with a client certificate and a user name/password read from a file. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { Aedes } from 'aedes';
import mqtt from 'mqtt';
import { generate } from 'selfsigned';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildSidecar } from '../build.mjs';
import { spawnSidecar } from './helpers/spawn';

let dir: string;
let server: tls.Server;
let broker: Aedes;
let port: number;
const clientSubjects: string[] = [];
const logins: string[] = [];

beforeAll(async () => {
  await buildSidecar();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-tls-'));
  // A CA, a broker certificate for 127.0.0.1 and a client certificate (extKeyUsage clientAuth), all signed by it.
  const ca = await generate([{ name: 'commonName', value: 'optimus test CA' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', keyCertSign: true, digitalSignature: true },
    ],
  });
  const signer = { key: ca.private, cert: ca.cert };
  const serverCert = await generate([{ name: 'commonName', value: 'broker' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    ca: signer,
    extensions: [
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
    ],
  });
  const clientCert = await generate([{ name: 'commonName', value: 'optimus-sidecar' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    ca: signer,
    extensions: [{ name: 'extKeyUsage', clientAuth: true }],
  });
  for (const [file, pem] of [
    ['ca.pem', ca.cert],
    ['client.pem', clientCert.cert],
    ['client.key', clientCert.private],
    ['password', 's3cret\n'],
  ] as const) {
    fs.writeFileSync(path.join(dir, file), pem);
  }
  broker = await Aedes.createBroker({
    authenticate: (client, user, password, cb) => {
      logins.push(`${client.id}:${user ?? ''}:${password?.toString() ?? ''}`);
      cb(null, user === undefined || (user === 'sidecar' && password?.toString() === 's3cret'));
    },
  });
  server = tls.createServer(
    {
      key: serverCert.private,
      cert: serverCert.cert,
      ca: [ca.cert],
      requestCert: true,
      rejectUnauthorized: true,
    },
    (socket) => {
      const peer = socket.getPeerCertificate();
      if (socket.authorized) clientSubjects.push(String(peer.subject.CN));
      broker.handle(socket);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});

afterAll(async () => {
  server.close();
  await new Promise<void>((resolve) => broker.close(() => resolve()));
  fs.rmSync(dir, { recursive: true, force: true });
});

it('publishes over mqtts:// with a verified broker, a client certificate and a password file', async () => {
  const url = `mqtts://127.0.0.1:${port}`;
  const sub = await mqtt.connectAsync(url, {
    ca: fs.readFileSync(path.join(dir, 'ca.pem')),
    cert: fs.readFileSync(path.join(dir, 'client.pem')),
    key: fs.readFileSync(path.join(dir, 'client.key')),
  });
  const got: string[] = [];
  sub.on('message', (topic, payload) => got.push(`${topic.split('/').pop() ?? ''}:${payload.toString()}`));
  await sub.subscribeAsync('optimus/v1/ml/tls-job/#', { qos: 1 });
  const log = path.join(dir, 'train.log');
  fs.writeFileSync(log, 'Epoch[0] Batch [50]\tSpeed: 64.00 samples/sec\tcross-entropy=1.5\n');
  fs.writeFileSync(`${log}.done`, '');
  const run = spawnSidecar(
    { log, broker: url, 'batch-size': '32' },
    {
      OPTIMUS_JOB: 'tls-job',
      OPTIMUS_BROKER_USERNAME: 'sidecar',
      OPTIMUS_BROKER_PASSWORD_FILE: path.join(dir, 'password'),
      OPTIMUS_BROKER_CA_FILE: path.join(dir, 'ca.pem'),
      OPTIMUS_BROKER_CERT_FILE: path.join(dir, 'client.pem'),
      OPTIMUS_BROKER_KEY_FILE: path.join(dir, 'client.key'),
      // No controller here to confirm the records: exit once the broker has them.
      OPTIMUS_CONFIRM_WAIT_SEC: '0',
    },
  );
  expect(await run.exited, run.stderr()).toBe(0);
  await expect.poll(() => got.length).toBeGreaterThanOrEqual(3);
  await sub.endAsync(true);
  expect(logins).toContain('optimus.ml.tls-job.worker.0:sidecar:s3cret');
  expect(clientSubjects).toContain('optimus-sidecar');
  const metrics = got.find((m) => m.startsWith('metrics:'));
  expect((JSON.parse(metrics?.slice(8) ?? '{}') as { records: unknown[] }).records[0]).toMatchObject({
    loss: 1.5,
    stepTime: 0.5,
    lossName: 'cross-entropy',
  });
  expect(
    got
      .filter((m) => m.startsWith('status:'))
      .map((m) => (JSON.parse(m.slice(7)) as { state: string }).state),
  ).toEqual(['online', 'done']);
});
