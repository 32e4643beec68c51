/**
 * The embedded broker as its own small process (`node broker.cjs <info-file>`), so that a
 * controller that crashes does not take the broker — and the QoS 1 messages it holds for the
 * controller's persistent session — down with it. Writes `{port, pid}` to the info file once
 * listening. Exits on SIGTERM, or after a minute without any controller connected (so an
 * abandoned broker does not linger).
 */
import { writeFileSync, renameSync } from 'node:fs';
import { startEmbeddedBroker } from './broker';

const infoFile = process.argv[2];
const port = Number(process.env['OPTIMUS_BROKER_PORT'] ?? '0');
const IDLE_EXIT_MS = 60_000;

const broker = await startEmbeddedBroker(
  Number.isInteger(port) ? port : 0,
  (id) => id.startsWith('optimus-controller'),
  // One JSON line per closed connection, in the state directory's broker.stderr.log.
  (clientId, err) =>
    process.stderr.write(`${JSON.stringify({ time: Date.now(), clientId, error: err.message })}\n`),
);
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
