/** MXNet Gluon estimator `LoggingHandler` lines (`[Epoch 0][Batch 10][Samples 640] time/interval: ...`). */
import { readColonList } from './metric-list';
import { type LineParser, type ParseResult, num, parsed, RECOGNIZED } from './types';

const BATCH =
  /\[Epoch (\d+)\]\[Batch (\d+)\](?:\[Samples ([^\]]*)\])?\s*time\/interval:\s*([\d.eE+-]+)s\s*(.*)$/;
const EPOCH = /\[Epoch (\d+)\] Finished in\s*([\d.eE+-]+)s,?\s*(.*)$/;

/** Gluon metric names carry `training ` / `validation `; the training prefix is dropped, the other kept. */
function cleanNames(metrics: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(metrics)) out[k.startsWith('training ') ? k.slice(9) : k] = v;
  return out;
}

/** Creates the Gluon estimator parser. */
export function gluonParser(): LineParser {
  return { framework: 'gluon', parse };
}

function parse(line: string): ParseResult {
  if (line.includes('Train finished using total')) return RECOGNIZED;
  if (!line.includes('[Epoch ')) return null;
  const b = BATCH.exec(line);
  if (b !== null) {
    const metrics: Record<string, number> = {};
    readColonList(b[5] ?? '', metrics);
    const interval = num(b[4] ?? '');
    return parsed('gluon', 'batch', {
      epoch: Number(b[1]),
      batch: Number(b[2]),
      intervalSec: Number.isFinite(interval) ? interval : null,
      metrics: cleanNames(metrics),
    });
  }
  const e = EPOCH.exec(line);
  if (e === null) return null;
  const metrics: Record<string, number> = {};
  readColonList(e[3] ?? '', metrics);
  const cleaned = cleanNames(metrics);
  const took = num(e[2] ?? '');
  if (Number.isFinite(took)) cleaned['time-cost'] = took;
  return parsed('gluon', 'epoch', { epoch: Number(e[1]), metrics: cleaned });
}
