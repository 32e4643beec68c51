/**
 * Composition root: configuration → saved state → pipeline (tail, parse, sequence) → courier → MQTT.
 * Exit codes: 0 finished and delivered (or stopped by a signal with nothing pending), 1 stopped with
 * records still pending, 2 configuration error.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { TaskStatus } from '../../shared/src/schemas';
import {
  CONTROLLER_STATUS_TOPIC,
  metricsTopic,
  statusTopic,
  storedTopic,
  taskClientId,
} from '../../shared/src/topics';
import { ConfigError, type SidecarConfig } from './config';
import { ConfirmWait } from './delivery/confirm-wait';
import { Courier } from './delivery/courier';
import { Outbox } from './delivery/outbox';
import { freshSeq, type SidecarState, StateStore } from './delivery/state-store';
import { FileTailer } from './input/file-tailer';
import { readStdin } from './input/stdin-reader';
import type { Logger } from './log';
import { parseControllerStatus, parseWatermark } from './delivery/watermark';
import { MqttConnection, SUBSCRIBE_PACKET_ID } from './mqtt/connection';
import { createLineParser } from './parse/select';
import { Pipeline } from './pipeline';
import { validateTaskStatus } from './validate/wire';

/** How long a SIGTERM after the training ended waits for the last records to be acknowledged. */
const SIGNAL_GRACE_MS = 20_000;

function statusPayload(state: TaskStatus['state']): string {
  const status: TaskStatus = { v: 1, state, ts: Date.now() };
  const problem = validateTaskStatus(status);
  if (problem !== null) throw new Error(`status does not match the shared schema: ${problem}`);
  return JSON.stringify(status);
}

/** Runs the sidecar until the training ends and everything is delivered; resolves with the exit code. */
export async function runSidecar(cfg: SidecarConfig, log: Logger): Promise<number> {
  const base = cfg.logPath === '-' ? 'stdin' : path.basename(cfg.logPath);
  if (cfg.stateDir !== null) {
    try {
      fs.mkdirSync(cfg.stateDir, { recursive: true });
    } catch (err) {
      throw new ConfigError(
        `OPTIMUS_STATE_DIR (--state-dir): cannot create ${cfg.stateDir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      );
    }
  }
  const stateFile = cfg.stateDir === null ? null : path.join(cfg.stateDir, `${base}.optimus-state.json`);
  const store = new StateStore(stateFile);
  const outbox = new Outbox(
    cfg.stateDir === null ? null : path.join(cfg.stateDir, `${base}.optimus-outbox.jsonl`),
  );
  const state = restore(store, outbox.load(), log);
  const pendingAtStart = outbox.load().filter((e) => e.seq > state.ackedSeq);

  let saveTimer: NodeJS.Timeout | null = null;
  let saveFailures = 0;
  const saveNow = (): boolean => {
    if (saveTimer !== null) clearTimeout(saveTimer);
    saveTimer = null;
    if (store.save(state)) return true;
    // A full disk: the outbox still proves which seqs are in use (it is not shrunk meanwhile).
    if (saveFailures++ % 60 === 0)
      log.warn('cannot save the state file; retrying', { error: store.lastError?.code ?? 'unknown' });
    saveSoon();
    return false;
  };
  const saveSoon = (): void => {
    saveTimer ??= setTimeout(saveNow, 1000);
  };
  // At the end of training: how long the controller still gets to confirm (ADR 0029).
  const confirmWait = new ConfirmWait(cfg.confirmWaitMs, Date.now);
  const courier = new Courier({
    topic: metricsTopic(cfg.task),
    window: cfg.window,
    ratePerSec: cfg.ratePerSec,
    maxBatch: cfg.batchRecords,
    resendAfterMs: cfg.resendAfterMs,
    reservedPacketId: SUBSCRIBE_PACKET_ID,
    numberedThrough: state.nextSeq - 1,
    now: Date.now,
    onStoredThrough: (seq) => {
      confirmWait.restart(); // the controller lives and stores: it gets the whole wait again
      state.ackedSeq = Math.max(state.ackedSeq, seq);
      outbox.compact(courier.pendingEntries(), saveNow);
      saveSoon();
      input.resume();
      checkDone();
    },
  });
  // Saved once now: the state file takes its only block while there is room; later saves rewrite it
  // in place, so a disk that fills up later cannot refuse them (and the outbox can be emptied).
  saveNow();
  courier.enqueueAll(pendingAtStart);

  let finishedReading = false;
  let lastAckPoll = 0;
  let resolveExit: (code: number) => void = () => undefined;
  const exit = new Promise<number>((r) => (resolveExit = r));
  const conn = new MqttConnection({
    url: cfg.brokerUrl,
    version: cfg.mqttVersion,
    // With per-task broker identities the broker binds this id to the task's user (ADR 0013).
    clientId: taskClientId(cfg.task),
    username: cfg.username ?? (cfg.password !== undefined ? taskClientId(cfg.task) : undefined),
    password: cfg.password,
    tls: { ca: cfg.ca, cert: cfg.cert, key: cfg.key },
    keepaliveSec: cfg.keepaliveSec,
    will: { topic: statusTopic(cfg.task), payload: statusPayload('lost'), retain: true },
    reconnectMinMs: cfg.reconnectMinMs,
    reconnectMaxMs: cfg.reconnectMaxMs,
    onConnect: (receiveMaximum) => {
      log.info('connected', { version: conn.protocolVersion, pending: courier.pendingCount });
      // A new session (perhaps a restarted broker that lost what it acknowledged): the unconfirmed
      // records go again, and the wait for the controller's confirmation starts over from their
      // new acknowledgements, not from the old session's.
      confirmWait.reset();
      void courier.sendControl(statusTopic(cfg.task), statusPayload('online'));
      courier.onConnect(receiveMaximum);
      checkDone();
    },
    onDisconnect: (reason) => {
      courier.onDisconnect();
      log.info('disconnected', { reason, pending: courier.pendingCount });
    },
    onAck: (id, ok) => {
      courier.onAck(id, ok);
      // At the end, the broker having everything may be enough (OPTIMUS_CONFIRM_WAIT_SEC).
      if (finishedReading) checkDone();
    },
    // The controller's watermark of this task and its status (ADR 0012).
    subscriptions: [storedTopic(cfg.task), CONTROLLER_STATUS_TOPIC],
    onMessage: (topic, payload) => {
      if (topic === CONTROLLER_STATUS_TOPIC) controllerStatus(payload);
      else watermark(payload);
    },
    onSubscribeRefused: (topics) =>
      log.warn('the broker refused a subscription; records are resent until confirmed', { topics }),
    // A file is polled at least every OPTIMUS_POLL_MS, so its acknowledgements can wait for the next
    // read (ADR 0008); standard input may stay silent for long, so there they are read at once.
    acksMayWait: cfg.logPath === '-' ? undefined : () => acksMayWait(),
  });
  // Read acknowledgements at once while the end of the training, the window or backpressure waits on them.
  const acksMayWait = (): boolean =>
    !finishedReading && !courier.needsAcks && courier.pendingCount < cfg.maxPending;
  courier.attach(conn);

  const pipeline = new Pipeline({
    parser: createLineParser(cfg.format),
    batchSize: cfg.batchSize,
    maxLineBytes: cfg.maxLineBytes,
    maxPending: cfg.maxPending,
    nextSeq: state.nextSeq,
    start: { ino: state.ino, pos: state.pos },
    outbox,
    courier,
    log,
    now: Date.now,
    onProgress: (p) => {
      // Acknowledgements are read in batches (ADR 0008): once half the window is in flight, or after a
      // poll interval, so a steady trickle does not wake the process for each of them.
      const now = Date.now();
      if (!acksMayWait() || courier.acksWanted || now - lastAckPoll >= cfg.pollMs) {
        lastAckPoll = now;
        conn.pollAcks();
      }
      if (p.ino === state.ino && p.pos === state.pos && p.nextSeq === state.nextSeq) return;
      state.ino = p.ino;
      state.pos = p.pos;
      state.nextSeq = p.nextSeq;
      saveSoon();
    },
    onFinished: () => {
      finishedReading = true;
      conn.pollAcks();
      log.info('training finished; delivering the rest', {
        pending: courier.pendingCount,
        ...pipeline.counters,
      });
      checkDone();
    },
  });

  const watermark = (payload: Buffer): void => {
    const w = parseWatermark(payload);
    if (w === null || courier.onStored(w.from, w.through) === 'accepted') return;
    // Only the controller can have stored what this process sent (ADR 0029): anything else is
    // forged, or from a controller confused about this task. Logged at the first and every 100th.
    const n = courier.refusedWatermarks;
    if (n === 1 || n % 100 === 0)
      log.warn('refused a watermark beyond the records this sidecar sent; the outbox keeps them', {
        from: w.from,
        through: w.through,
        refused: n,
      });
  };
  let controllerTs: number | null = null;
  const controllerStatus = (payload: Buffer): void => {
    const st = parseControllerStatus(payload);
    if (st === null) return;
    // A controller online under a status not seen before (the first one too: a restarted broker may
    // have had no subscription of the controller when it acknowledged our records) gets everything
    // unconfirmed again, and the whole confirmation wait (ADR 0029).
    const fresh = st.online && st.ts !== controllerTs;
    if (st.online) controllerTs = st.ts;
    courier.onControllerStatus(st.online, fresh);
    if (fresh) {
      confirmWait.restart();
      if (finishedReading) checkDone();
    }
  };

  // Once reading is over and the controller has confirmed everything (or, at the latest, the broker has
  // it and the controller had OPTIMUS_CONFIRM_WAIT_SEC since its last chance to confirm, ADR 0029):
  // retained `done`, a clean DISCONNECT (no Last Will), exit 0.
  let finishing = false;
  let confirmTimer: NodeJS.Timeout | null = null;
  function checkDone(): void {
    if (!finishedReading || finishing || !conn.isConnected) return;
    if (courier.pendingCount > 0) {
      if (courier.unacknowledgedCount > 0) return;
      const left = confirmWait.left();
      if (left > 0) {
        // One timer at a time; a wait that started over finds it early and arms the next.
        confirmTimer ??= setTimeout(() => {
          confirmTimer = null;
          checkDone();
        }, left + 5).unref();
        return;
      }
      log.warn(
        'the controller has not confirmed every record; the broker holds them, the outbox keeps them',
        {
          unconfirmed: courier.pendingCount,
        },
      );
    }
    finishing = true;
    void courier.sendControl(statusTopic(cfg.task), statusPayload('done')).then(async (ok) => {
      finishing = false;
      if (!ok) return; // reconnect calls checkDone again
      saveNow();
      input.stop();
      courier.stop();
      await conn.stop(true);
      log.info('done', { ...pipeline.counters, refusedWatermarks: courier.refusedWatermarks });
      resolveExit(0);
    });
  }

  const input = startInput(cfg, state, pipeline);
  await conn.start();

  const stopNow = (sig: string): void => {
    log.info('signal; stopping', { signal: sig, pending: courier.pendingCount });
    input.stop();
    saveNow();
    courier.stop();
    void conn.stop(false).then(() => resolveExit(courier.pendingCount === 0 ? 0 : 1));
  };
  // Kubernetes stops sidecars with SIGTERM once the training container has ended: if it left the done
  // marker, finish the delivery first (bounded by a grace period); a second signal stops at once.
  let signals = 0;
  const onSignal = (sig: string): void => {
    signals++;
    const trainingEnded = finishedReading || (cfg.doneFile !== null && fs.existsSync(cfg.doneFile));
    if (signals > 1 || !trainingEnded) return stopNow(sig);
    log.info('signal after the training ended; delivering before exit', {
      signal: sig,
      pending: courier.pendingCount,
    });
    input.check();
    setTimeout(() => stopNow(sig), SIGNAL_GRACE_MS).unref();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // Local mode: a controller killed with SIGKILL sends no signal. Its end stops us the same way (the
  // outbox keeps what is undelivered; the next run drains it).
  if (cfg.parentPid !== null) {
    const parent = cfg.parentPid;
    const watch = setInterval(() => {
      if (process.ppid === parent) return;
      clearInterval(watch);
      onSignal('parent exited');
    }, 500);
    watch.unref();
  }
  return exit;
}

interface Input {
  resume(): void;
  stop(): void;
  /** Looks for the done marker now instead of at the next poll. */
  check(): void;
}

function startInput(cfg: SidecarConfig, state: SidecarState, pipeline: Pipeline): Input {
  if (cfg.logPath === '-') {
    const r = readStdin(pipeline);
    return { resume: r.resume, stop: () => process.stdin.pause(), check: () => undefined };
  }
  const tailer = new FileTailer({
    path: cfg.logPath,
    doneFile: cfg.doneFile,
    start: { ino: state.ino, pos: state.pos },
    pollMs: cfg.pollMs,
    idlePollMs: cfg.idlePollMs,
    quietMs: cfg.quietMs,
    sink: pipeline,
  });
  tailer.start();
  return { resume: () => tailer.resume(), stop: () => tailer.stop(), check: () => tailer.wake(true) };
}

/** Saved state, advanced past anything the outbox proves was already read and numbered. */
function restore(
  store: StateStore,
  entries: { seq: number; ino: number | null; pos: number }[],
  log: Logger,
): SidecarState {
  const saved = store.load();
  const state: SidecarState = saved ?? {
    v: 1,
    ino: null,
    pos: 0,
    nextSeq: freshSeq(Date.now()),
    ackedSeq: -1,
  };
  // The outbox is written before the state file: its last entry may be newer (or the only record).
  const last = entries.at(-1);
  if (last !== undefined && (saved === null || last.seq >= state.nextSeq)) {
    state.nextSeq = Math.max(state.nextSeq, last.seq + 1);
    state.ino = last.ino;
    state.pos = last.pos;
  }
  log.info(saved === null ? 'no saved state; starting fresh' : 'resuming', {
    ...state,
    outbox: entries.length,
  });
  return state;
}
