/** Which metric is the loss, or a labelled proxy (`1-accuracy`) when a job reports only accuracy. */

const LOSS_NAMES = new Set([
  'loss',
  'train_loss',
  'cross-entropy',
  'ce',
  'nll-loss',
  'nll_loss',
  'perplexity',
  'mse',
  'rmse',
  'mae',
]);
const ACCURACY = /(^|[^a-z])(acc|accuracy|top_k_accuracy_\d+)$/i;

const isLossName = (name: string): boolean => {
  const base = name.replace(/^(validation |val_|eval_)/, '');
  return LOSS_NAMES.has(base) || base.toLowerCase().includes('loss');
};
const isValidationName = (name: string): boolean => /^(validation |val_|eval_)/.test(name);

export interface LossPick {
  loss: number | null;
  lossName: string | null;
}

/**
 * Picks the loss: exact loss names first, then any `*loss*`; training metrics before validation ones
 * unless the record is a validation record. Falls back to `1-<accuracy>` labelled as such.
 */
export function pickLoss(metrics: Record<string, number>, validation: boolean): LossPick {
  const names = Object.keys(metrics);
  // The same few metric-name sets repeat on every line: remember which name was chosen for each.
  const key = `${validation ? 'v' : 't'}\0${names.join('\0')}`;
  let choice = CHOICES.get(key);
  if (choice === undefined) {
    choice = chooseLossName(names, validation);
    if (CHOICES.size < 1024) CHOICES.set(key, choice);
  }
  if (choice === null) return { loss: null, lossName: null };
  const v = metrics[choice.name];
  if (v === undefined) return { loss: null, lossName: null };
  if (!choice.proxy) return { loss: v, lossName: choice.name };
  return v >= 0 && v <= 1
    ? { loss: Math.round((1 - v) * 1e12) / 1e12, lossName: `1-${choice.name}` }
    : { loss: null, lossName: null };
}

interface LossChoice {
  name: string;
  /** True when the loss is `1 - accuracy`. */
  proxy: boolean;
}
const CHOICES = new Map<string, LossChoice | null>();

function chooseLossName(names: string[], validation: boolean): LossChoice | null {
  const preferred = names.filter((n) => isValidationName(n) === validation);
  const pools = [preferred, names];
  for (const pool of pools) {
    const exact = pool.find((n) => LOSS_NAMES.has(n.replace(/^(validation |val_|eval_)/, '')));
    const any = exact ?? pool.find(isLossName);
    if (any !== undefined) return { name: any, proxy: false };
  }
  for (const pool of pools) {
    const acc = pool.find((n) => ACCURACY.test(n));
    if (acc !== undefined) return { name: acc, proxy: true };
  }
  return null;
}
