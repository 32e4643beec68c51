/**
 * Servers kept sorted by free room, one sorted list per server class, so that placement visits
 * the roomiest servers first without scanning 16,000 servers per job.
 *
 * - A class is the set of resources a server offers (e.g. {cpu, memory} vs {cpu, memory, gpu}).
 *   A task only visits classes that offer everything it asks for, so a GPU worker never lands on
 *   a CPU-only server, and CPU-only tasks try CPU-only servers before GPU servers.
 * - Within a class, a server's key is Σ_r weight_r · free[r] / max_r (max over the class):
 *   "available resources" as one number. Resources that only some classes offer (GPUs) weigh
 *   1000× so that, among GPU servers, those with free GPUs come first whatever their free CPU.
 *   The key is linear with positive weights, so if a server fits demand d its key ≥ key(d): a
 *   scan stops as soon as keys drop below key(d) — no server further down can fit.
 * - A placement only lowers keys; `update` moves one server with two binary searches.
 */
import type { PreparedInput } from '../core/prepare';
import { EPSILON, fits } from '../core/resource-vector';
import { SortedChunks } from './sorted-chunks';

interface ServerClass {
  /** Resource positions this class offers. */
  readonly offers: readonly number[];
  readonly offered: ReadonlySet<number>;
  readonly max: Float64Array;
  /** weight_r / max_r per offered resource (0 elsewhere). */
  readonly scale: Float64Array;
  /** Server indexes, key descending, then index ascending. */
  order: SortedChunks;
}

export class ServerIndex {
  private readonly classes: ServerClass[];
  private readonly classOf: Int32Array;
  private readonly key: Float64Array;

  constructor(
    input: PreparedInput,
    readonly free: Float64Array[],
  ) {
    const bySignature = new Map<string, number[]>();
    for (const s of input.servers) {
      const offers = [...s.allocatable.keys()].filter((i) => (s.allocatable[i] ?? 0) > 0);
      const sig = offers.join(',');
      const list = bySignature.get(sig) ?? [];
      list.push(s.index);
      bySignature.set(sig, list);
    }
    // Eligibility slots (positions ≥ real) split classes but are not room: they weigh nothing
    // in keys, rarity or the class order (`core/eligibility.ts`).
    const real = input.space.real;
    const resourcesOf = (sig: string) => (sig === '' ? [] : sig.split(',').filter((r) => Number(r) < real));
    const offeredBy = new Map<string, number>();
    for (const sig of bySignature.keys())
      for (const r of resourcesOf(sig)) offeredBy.set(r, (offeredBy.get(r) ?? 0) + 1);
    const common = Math.max(0, ...offeredBy.values());
    const sigs = [...bySignature.keys()].sort(
      (a, b) => resourcesOf(a).length - resourcesOf(b).length || (a < b ? -1 : 1),
    );
    this.classOf = new Int32Array(input.servers.length);
    this.key = new Float64Array(input.servers.length);
    const key = this.key;
    // Key descending, then index ascending: a total order, so the result is deterministic.
    const compare = (a: number, b: number): number => {
      const ka = key[a] ?? 0;
      const kb = key[b] ?? 0;
      return ka !== kb ? kb - ka : a - b;
    };
    this.classes = sigs.map((sig, c) => {
      const members = bySignature.get(sig) ?? [];
      const offers = sig === '' ? [] : sig.split(',').map(Number);
      const max = new Float64Array(input.space.names.length);
      for (const i of members) {
        const a = input.servers[i]?.allocatable;
        for (const r of offers) max[r] = Math.max(max[r] ?? 0, a?.[r] ?? 0);
      }
      const scale = new Float64Array(max.length);
      for (const r of offers) {
        if (r >= real) continue;
        scale[r] = ((offeredBy.get(String(r)) ?? 0) < common ? RARE_WEIGHT : 1) / (max[r] || 1);
      }
      const cls: ServerClass = {
        offers,
        offered: new Set(offers),
        max,
        scale,
        order: new SortedChunks([], compare),
      };
      for (const i of members) {
        this.classOf[i] = c;
        this.key[i] = this.keyOf(cls, i);
      }
      cls.order = new SortedChunks([...members].sort(compare), compare);
      return cls;
    });
  }

  /**
   * Visits the servers that offer every resource `needs` asks for, roomiest first, class by
   * class (fewest offered resources first). Stops when `visit` returns true, when no further
   * server in a class can hold `smallest`, or after `limit` visits in total. Skips a class whose
   * largest server could not hold `largest` even empty (then no k-server split of that size can).
   */
  visit(
    needs: Float64Array,
    bounds: { readonly smallest: Float64Array; readonly largest: Float64Array },
    limit: number,
    visit: (server: number) => boolean,
  ): void {
    let budget = limit;
    const { smallest, largest } = bounds;
    for (const cls of this.classes) {
      if (!offersAll(cls, needs) || !fits(cls.max, largest)) continue;
      let bound = 0;
      for (const r of cls.offers) bound += (smallest[r] ?? 0) * (cls.scale[r] ?? 0);
      bound -= EPSILON * RARE_WEIGHT * cls.offers.length;
      let stop = false;
      cls.order.visit((s) => {
        if ((this.key[s] ?? 0) < bound) return true;
        stop = visit(s) || --budget <= 0;
        return stop;
      });
      if (stop) return;
    }
  }

  /** Per resource, the largest allocatable amount among servers offering all of `needs`. */
  largestServer(needs: Float64Array): Float64Array {
    const out = new Float64Array(needs.length);
    for (const cls of this.classes) {
      if (!offersAll(cls, needs)) continue;
      for (let r = 0; r < out.length; r++) out[r] = Math.max(out[r] ?? 0, cls.max[r] ?? 0);
    }
    return out;
  }

  /** Re-sorts one server after its free amount changed. */
  update(server: number): void {
    const cls = this.classes[this.classOf[server] ?? 0];
    if (!cls) return;
    cls.order.remove(server);
    this.key[server] = this.keyOf(cls, server);
    cls.order.insert(server);
  }

  private keyOf(cls: ServerClass, server: number): number {
    const f = this.free[server];
    let k = 0;
    for (const r of cls.offers) k += Math.max(0, f?.[r] ?? 0) * (cls.scale[r] ?? 0);
    return k;
  }
}

/** Weight of a resource only some server classes offer (see the file comment). */
const RARE_WEIGHT = 1000;

function offersAll(cls: ServerClass, needs: Float64Array): boolean {
  for (let r = 0; r < needs.length; r++) if ((needs[r] ?? 0) > 0 && !cls.offered.has(r)) return false;
  return true;
}
