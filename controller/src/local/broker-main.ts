/**
 * The embedded broker as its own small process (`node broker.cjs <info-file>`), so that a
 * controller that crashes does not take the broker — and the QoS 1 messages it holds for the
 * controller's persistent session — down with it. Writes `{port, pid}` to the info file once
 * listening. Every client is authenticated with the key in OPTIMUS_BROKER_KEY_FILE (ADR 0031).
 * Exits on SIGTERM, or after a minute without any controller connected (so an
 * abandoned broker does not linger).
 */
import { writeFileSync, renameSync } from 'node:fs';
import { startEmbeddedBroker } from './broker';
import { readKey } from './broker-credentials';

const infoFile = process.argv[2];
const port = Number(process.env['OPTIMUS_BROKER_PORT'] ?? '0');
const keyFile = process.env['OPTIMUS_BROKER_KEY_FILE'];
const IDLE_EXIT_MS = 60_000;

/** One JSON line per event, in the state directory's broker.stderr.log. */
const logLine = (o: Record<string, unknown>): boolean =>
  process.stderr.write(`${JSON.stringify({ time: Date.now(), ...o })}\n`);

// Never open: without its key the broker does not start (ADR 0031).
if (!keyFile) throw new Error('OPTIMUS_BROKER_KEY_FILE is required');
const broker = await startEmbeddedBroker(Number.isInteger(port) ? port : 0, {
  watch: (id) => id.startsWith('optimus-controller'),
  onClientError: (clientId, err) => logLine({ clientId, error: err.message }),
  access: { key: readKey(keyFile), onRefused: (r) => logLine({ refused: r.what, ...r }) },
});
if (infoFile) {
  writeFileSync(`${infoFile}.tmp`, JSON.stringify({ port: broker.port, pid: process.pid }));
  renameSync(`${infoFile}.tmp`, infoFile);
}
let idleSince: number | null = null;
setInterval(() => {
  if (broker.watchedClients() > 0) idleSince = null;
  else if (idleSince === null) idleSince = Date.now();
  else if (Date.now() - idleSince > IDLE_EXIT_MS) void broker.close().then(() => process.exit(0));
}, 1000);
let stopping = false;
const stop = (): void => {
  if (stopping) return; // a second SIGTERM while closing changes nothing
  stopping = true;
  void broker.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
// Ctrl-C reaches the whole process group: the controller stops us (SIGTERM) after its own shutdown.
process.on('SIGINT', () => {});
