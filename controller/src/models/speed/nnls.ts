/**
 * Non-negative least squares on the normal equations, for the tiny problems of the speed model
 * (≤ 8 coefficients). Why not `ml-fcnnls` here: the best model refits every candidate feature set
 * once per cross-validation fold, and the fold fits are cheap downdates of one Gram matrix
 * (G − G_fold); working on the Gram form keeps 4,000 refits well under a second. The paper baseline
 * uses `ml-fcnnls` directly, and the tests check both solvers agree.
 */

/** Normal equations of a least-squares problem: G = AᵀA, b = Aᵀy (G row-major, d×d). */
export interface NormalEquations {
  readonly gram: Float64Array;
  readonly rhs: Float64Array;
  readonly dim: number;
}

/** Accumulates rows into normal equations; `scale` multiplies the row and its target (a √weight). */
export function addRow(eq: NormalEquations, row: ArrayLike<number>, target: number, scale = 1): void {
  const { gram, rhs, dim } = eq;
  const s2 = scale * scale;
  for (let i = 0; i < dim; i++) {
    const ri = (row[i] as number) * s2;
    rhs[i] = (rhs[i] as number) + ri * target;
    for (let j = 0; j < dim; j++) gram[i * dim + j] = (gram[i * dim + j] as number) + ri * (row[j] as number);
  }
}

export function emptyEquations(dim: number): NormalEquations {
  return { gram: new Float64Array(dim * dim), rhs: new Float64Array(dim), dim };
}

/** a − b, element-wise (used to leave a fold out of the full normal equations). */
export function subtractEquations(a: NormalEquations, b: NormalEquations): NormalEquations {
  const gram = a.gram.map((v, i) => v - (b.gram[i] as number));
  const rhs = a.rhs.map((v, i) => v - (b.rhs[i] as number));
  return { gram, rhs, dim: a.dim };
}

/** Scratch buffers of {@link nnlsNormal}, reusable across calls of the same dimension (fewer allocations). */
export interface NnlsWorkspace {
  readonly inP: Uint8Array;
  readonly passive: Int32Array;
  readonly z: Float64Array;
  readonly work: Float64Array;
}

export function nnlsWorkspace(dim: number): NnlsWorkspace {
  return {
    inP: new Uint8Array(dim),
    passive: new Int32Array(dim),
    z: new Float64Array(dim),
    work: new Float64Array(dim * (dim + 1)),
  };
}

/** Solves G_PP z = b_P for the m passive indices (Gaussian elimination with partial pivoting); z in `out`. */
function solvePassive(
  eq: NormalEquations,
  passive: Int32Array,
  m: number,
  ridge: number,
  a: Float64Array,
  out: Float64Array,
): void {
  const w = m + 1;
  const { gram, rhs, dim } = eq;
  for (let r = 0; r < m; r++) {
    const pr = passive[r] as number;
    for (let c = 0; c < m; c++) a[r * w + c] = gram[pr * dim + (passive[c] as number)] as number;
    a[r * w + r] = (a[r * w + r] as number) + ridge;
    a[r * w + m] = rhs[pr] as number;
  }
  for (let col = 0; col < m; col++) {
    let pivot = col;
    for (let r = col + 1; r < m; r++)
      if (Math.abs(a[r * w + col] as number) > Math.abs(a[pivot * w + col] as number)) pivot = r;
    if (pivot !== col) {
      for (let c = 0; c <= m; c++) {
        const t = a[col * w + c] as number;
        a[col * w + c] = a[pivot * w + c] as number;
        a[pivot * w + c] = t;
      }
    }
    const d = (a[col * w + col] as number) || 1e-300;
    for (let r = col + 1; r < m; r++) {
      const f = (a[r * w + col] as number) / d;
      if (f !== 0)
        for (let c = col; c <= m; c++)
          a[r * w + c] = (a[r * w + c] as number) - f * (a[col * w + c] as number);
    }
  }
  for (let r = m - 1; r >= 0; r--) {
    let s = a[r * w + m] as number;
    for (let c = r + 1; c < m; c++) s -= (a[r * w + c] as number) * (out[c] as number);
    out[r] = s / ((a[r * w + r] as number) || 1e-300);
  }
}

/**
 * Lawson–Hanson active-set NNLS: minimises ½θᵀGθ − bᵀθ subject to θ ≥ 0.
 * Columns should be of comparable scale (callers normalise them) for the tolerances to mean much.
 * `warmStart`: a nearby solution (e.g. the fit on all rows when fitting a cross-validation fold); its
 * positive coefficients start in the passive set, which usually saves most of the iterations.
 */
export function nnlsNormal(
  eq: NormalEquations,
  warmStart?: ArrayLike<number>,
  workspace?: NnlsWorkspace,
): Float64Array {
  const maxIterations = 30;
  const { dim, gram, rhs } = eq;
  let trace = 0;
  let rhsMax = 1;
  for (let i = 0; i < dim; i++) {
    trace += gram[i * dim + i] as number;
    rhsMax = Math.max(rhsMax, Math.abs(rhs[i] as number));
  }
  const ridge = 1e-12 * (trace / dim || 1);
  const tol = 1e-12 * rhsMax;
  const ws = workspace ?? nnlsWorkspace(dim);
  const { inP, passive, z, work } = ws;
  const theta = new Float64Array(dim);
  inP.fill(0);
  let warm = false;
  if (warmStart) {
    for (let j = 0; j < dim; j++) {
      if ((warmStart[j] as number) > 0) {
        inP[j] = 1;
        warm = true;
      }
    }
  }
  for (let outer = 0; outer < maxIterations; outer++) {
    if (!warm) {
      let best = -1;
      let bestGrad = tol;
      for (let j = 0; j < dim; j++) {
        if (inP[j]) continue;
        let g = rhs[j] as number;
        for (let k = 0; k < dim; k++) g -= (gram[j * dim + k] as number) * (theta[k] as number);
        if (g > bestGrad) {
          best = j;
          bestGrad = g;
        }
      }
      if (best < 0) break;
      inP[best] = 1;
    }
    warm = false;
    for (let inner = 0; inner < 3 * dim; inner++) {
      let m = 0;
      for (let j = 0; j < dim; j++) if (inP[j]) passive[m++] = j;
      solvePassive(eq, passive, m, ridge, work, z);
      let alpha = 1;
      let blocking = -1;
      for (let r = 0; r < m; r++) {
        const j = passive[r] as number;
        const zj = z[r] as number;
        const tj = theta[j] as number;
        if (zj <= 0) {
          const step = tj / (tj - zj || 1e-300);
          if (step < alpha) {
            alpha = step;
            blocking = j;
          }
        }
      }
      for (let r = 0; r < m; r++) {
        const j = passive[r] as number;
        theta[j] = (theta[j] as number) + alpha * ((z[r] as number) - (theta[j] as number));
      }
      if (blocking < 0) break;
      // The blocking coefficient hit zero: it leaves the passive set (and any other that went ≤ 0).
      for (let r = 0; r < m; r++) {
        const j = passive[r] as number;
        if (j === blocking || (theta[j] as number) <= 0) {
          theta[j] = 0;
          inP[j] = 0;
        }
      }
    }
  }
  return theta;
}
