/**
 * Policy options written as `key=value` (the CLI's `--policy-option`), validated against the
 * options the policies understand. Pure: strings in, a `PolicyOptions` object or an Error out.
 */
import { z } from 'zod';
import type { PolicyOptions } from './registry';

const bool = z.enum(['true', 'false']).transform((v) => v === 'true');
const count = z.coerce.number().int().min(0);

/** Every option a `key=value` may set, with how its value is read. */
const SCALARS = {
  resizeCost: bool,
  restartAwareTime: bool,
  worthARestart: bool,
  protect: bool,
  lookAhead: bool,
  gain: z.enum(['seconds', 'relative']),
  shrink: bool,
  strandingGuard: bool,
  unevenFallback: bool,
  evenSearch: z.enum(['bounded', 'all']),
  slack: count,
  scanLimit: count.min(1),
  keepShrunk: bool,
  backfill: bool,
  passes: count.min(1),
  untilNoSpeedUp: bool,
  srtfWeight: z.coerce.number().finite().min(0),
  speedUp: z.enum(['point', 'unless-flat', 'optimistic']),
  stragglers: z.literal('false').transform(() => false as const),
  parameterAssignment: z.enum(['paa', 'mxnet-default']),
  promoteKnob: z.coerce.number().finite().min(0),
  queueThresholds: z
    .string()
    .regex(/^\d+(\.\d+)?(,\d+(\.\d+)?)*$/, 'comma-separated GPU-seconds, e.g. 3600,7200')
    .transform((v) => v.split(',').map(Number)),
} as const;

type Key = keyof typeof SCALARS;
const KEYS = Object.keys(SCALARS) as Key[];

/** The keys `parsePolicyOptions` accepts, sorted. */
export function policyOptionKeys(): string[] {
  return [...KEYS, 'fixedShape'].sort();
}

/**
 * Parses `key=value` strings. `fixedShape=P+W` sets the FIFO/SRTF shape. Later pairs win.
 * @example parsePolicyOptions(['shrink=false', 'gain=seconds']) // { shrink: false, gain: 'seconds' }
 */
export function parsePolicyOptions(pairs: readonly string[]): PolicyOptions {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`policy option "${pair}" must be key=value`);
    const key = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    if (key === 'fixedShape') {
      const m = /^(\d+)\+(\d+)$/.exec(value);
      if (!m) throw new Error(`policy option fixedShape must be P+W (e.g. 1+1), got "${value}"`);
      out.fixedShape = { ps: Number(m[1]), workers: Number(m[2]) };
      continue;
    }
    if (!(KEYS as string[]).includes(key)) {
      throw new Error(`unknown policy option "${key}"; known: ${policyOptionKeys().join(', ')}`);
    }
    const parsed = SCALARS[key as Key].safeParse(value);
    if (!parsed.success) {
      throw new Error(`policy option ${key}: invalid value "${value}" (${parsed.error.issues[0]?.message})`);
    }
    out[key] = parsed.data;
  }
  return out;
}

/** `key=value` strings that give `options` back through `parsePolicyOptions` (for reports). */
export function formatPolicyOptions(options: PolicyOptions): string[] {
  const { fixedShape, ...rest } = options;
  const pairs = Object.entries(rest).map(
    ([k, v]) =>
      `${k}=${Array.isArray(v) ? v.join(',') : typeof v === 'object' ? JSON.stringify(v) : String(v)}`,
  );
  return fixedShape ? [...pairs, `fixedShape=${fixedShape.ps}+${fixedShape.workers}`] : pairs;
}
