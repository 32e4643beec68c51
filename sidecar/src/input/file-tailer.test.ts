import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileTailer, type TailSink } from './file-tailer';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dirs: string[] = [];
const tailers: FileTailer[] = [];
afterEach(() => {
  for (const t of tailers.splice(0)) t.stop();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function setup(o: { doneElsewhere?: boolean; waiting?: boolean } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tailer-'));
  dirs.push(dir);
  const log = path.join(dir, 'train.log');
  fs.writeFileSync(log, '');
  const other = fs.mkdtempSync(path.join(os.tmpdir(), 'tailer-done-'));
  dirs.push(other);
  const got: string[] = [];
  const stats = { wakes: 0 };
  const sink: TailSink = {
    bytes: (buf, start, end) => void got.push(buf.toString('utf8', start, end)),
    fileEnded: () => undefined,
    reset: () => undefined,
    endOfRead: () => void (stats.wakes += 1),
    canRead: () => true,
    finished: () => undefined,
    mayIdle: () => !o.waiting,
  };
  const tailer = new FileTailer({
    path: log,
    doneFile: o.doneElsewhere ? path.join(other, 'done') : `${log}.done`,
    start: { ino: null, pos: 0 },
    pollMs: 20,
    idlePollMs: 5000,
    quietMs: 10,
    sink,
  });
  tailers.push(tailer);
  tailer.start();
  return { log, got, stats };
}

async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met');
    await sleep(5);
  }
}

describe('FileTailer idle polling', () => {
  it('backs off while idle once the watcher has announced a change, and still reads a new line at once', async () => {
    const { log, got, stats } = setup();
    fs.appendFileSync(log, 'first\n');
    await until(() => got.join('').includes('first'));
    await sleep(300); // batching ends: the watcher is re-armed
    const before = stats.wakes;
    await sleep(1300);
    const idleWakes = stats.wakes - before;
    // 1.3 s at a fixed 20 ms poll is ~65 wake-ups; doubling up to 5 s leaves a handful.
    expect(idleWakes).toBeLessThan(15);
    const t0 = Date.now();
    fs.appendFileSync(log, 'second\n');
    await until(() => got.join('').includes('second'));
    expect(Date.now() - t0).toBeLessThan(1000); // the idle poll alone would be ≥ 1.28 s by now
  });

  it('keeps polling at pollMs when the watcher cannot announce the done marker', async () => {
    const { log, got, stats } = setup({ doneElsewhere: true });
    fs.appendFileSync(log, 'first\n');
    await until(() => got.join('').includes('first'));
    await sleep(300);
    const before = stats.wakes;
    await sleep(1300);
    expect(stats.wakes - before).toBeGreaterThan(30);
  });

  it('keeps polling at pollMs while records wait downstream (the polls are where acknowledgements are read)', async () => {
    const { log, got, stats } = setup({ waiting: true });
    fs.appendFileSync(log, 'first\n');
    await until(() => got.join('').includes('first'));
    await sleep(300);
    const before = stats.wakes;
    await sleep(1300);
    expect(stats.wakes - before).toBeGreaterThan(30);
  });
});
