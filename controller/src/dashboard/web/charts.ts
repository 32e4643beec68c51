/**
 * uPlot charts (ADR 0015): one small wrapper that sizes a chart to its container, follows the
 * container's width, and updates data in place so a live refresh does not rebuild the chart.
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { h } from './dom';

export const PALETTE = [
  '#2563eb',
  '#dc2626',
  '#16a34a',
  '#9333ea',
  '#ea580c',
  '#0891b2',
  '#4d7c0f',
  '#be185d',
];

export interface Chart {
  readonly element: HTMLElement;
  update(data: uPlot.AlignedData): void;
  destroy(): void;
}

export interface ChartOptions {
  /** Accessible name of the chart (role="img"). */
  readonly label: string;
  readonly height?: number;
  readonly options: Omit<uPlot.Options, 'width' | 'height'>;
  /** A fingerprint of the series layout: a change rebuilds the chart instead of updating its data. */
  readonly layout: string;
}

/**
 * A chart whose options are rebuilt when `layout` changes, else only its data is replaced. Below
 * the canvas, a legend says what each vertical line and shaded range means (the series have
 * uPlot's own legend; the marks would otherwise be unexplained).
 */
export class LiveChart {
  readonly element: HTMLElement;
  private readonly canvasBox: HTMLElement;
  private readonly marksLegend: HTMLElement;
  private plot: uPlot | null = null;
  private layout = '';
  private readonly resize: ResizeObserver;

  constructor(
    private readonly label: string,
    private readonly height = 240,
  ) {
    this.canvasBox = h('div', { class: 'plot' });
    this.marksLegend = h('ul', { class: 'marks-legend', 'data-testid': 'marks-legend' });
    this.element = h(
      'figure',
      { class: 'chart', role: 'img', 'aria-label': label },
      this.canvasBox,
      this.marksLegend,
    );
    this.resize = new ResizeObserver(() => this.plot?.setSize({ width: this.width(), height: this.height }));
    this.resize.observe(this.element);
  }

  /** Vertical lines and shaded ranges drawn under the series; read at every draw, so always current. */
  private marks: Marks = { lines: [], bands: [] };

  /** The hooks that draw {@link marks}: pass them in the options of {@link render}. */
  markHooks(): uPlot.Hooks.Arrays {
    return xMarks(() => this.marks);
  }

  render(o: Omit<ChartOptions, 'label' | 'height'>, data: uPlot.AlignedData, marks?: Marks): void {
    if (marks) this.marks = marks;
    // Where the marks are, for tests and tools (a canvas does not say).
    this.element.dataset['marks'] = JSON.stringify(this.marks.lines.map((l) => l.x));
    const xLabel = o.options.axes?.[0]?.label;
    this.element.dataset['xAxis'] = typeof xLabel === 'string' ? xLabel : '';
    this.drawMarksLegend();
    if (this.plot && this.layout === o.layout) {
      this.plot.setData(data);
      return;
    }
    this.plot?.destroy();
    this.layout = o.layout;
    // The y range in use, for tests and tools: a line drawn at the edge is half clipped.
    const yRange = (u: uPlot, key: string): void => {
      if (key === 'y')
        this.element.dataset['yRange'] = JSON.stringify([u.scales['y']?.min, u.scales['y']?.max]);
    };
    const hooks = { ...o.options.hooks, setScale: [...(o.options.hooks?.setScale ?? []), yRange] };
    this.plot = new uPlot(
      { ...o.options, hooks, width: this.width(), height: this.height },
      data,
      this.canvasBox,
    );
  }

  private drawMarksLegend(): void {
    const items = [
      ...this.marks.lines.map((l) => ({
        label: l.label,
        swatch: `line${l.dash ? ' dashed' : ''}`,
        color: l.color,
      })),
      ...this.marks.bands.map((b) => ({ label: b.label, swatch: 'band', color: b.color })),
    ]
      .filter((i): i is { label: string; swatch: string; color: string } => i.label !== undefined)
      .filter((i, k, all) => all.findIndex((j) => j.label === i.label) === k);
    this.marksLegend.replaceChildren(
      ...items.map((i) =>
        h(
          'li',
          { 'data-mark-label': i.label },
          h('span', { class: `swatch ${i.swatch}`, style: `--c: ${i.color}`, 'aria-hidden': 'true' }),
          ` ${i.label}`,
        ),
      ),
    );
  }

  destroy(): void {
    this.resize.disconnect();
    this.plot?.destroy();
    this.plot = null;
  }

  private width(): number {
    return Math.max(
      240,
      Math.floor(this.element.clientWidth || this.element.parentElement?.clientWidth || 600),
    );
  }
}

/** Series drawn as points only (measurements). */
export function pointsSeries(label: string, stroke: string, size = 7): uPlot.Series {
  return {
    label,
    stroke,
    fill: stroke,
    width: 0,
    paths: () => null,
    points: { show: true, size, stroke, fill: stroke },
  };
}

export function lineSeries(label: string, stroke: string, o: Partial<uPlot.Series> = {}): uPlot.Series {
  return { label, stroke, width: 2, points: { show: false }, ...o };
}

/** Vertical lines and shaded x-ranges; each `label` appears in the chart's legend of marks. */
export interface Marks {
  readonly lines: readonly { x: number; color: string; dash?: number[]; label?: string }[];
  readonly bands: readonly { from: number; to: number; color: string; label?: string }[];
}

/** Tick steps of a job-time axis, in job seconds: whole seconds, minutes and hours. */
const JOB_TIME_INCRS = [
  1, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400,
];

/** An x axis in job time (job seconds, labelled "job time"), ticks on whole minutes and hours. */
export const jobTimeAxis = (values: (u: uPlot, splits: number[]) => string[]): uPlot.Axis => ({
  label: 'job time',
  values,
  incrs: JOB_TIME_INCRS,
});

/** The x series of a chart over job time: its legend reads "job time: 5m12s". */
export const jobTimeSeries = (format: (sec: number) => string): uPlot.Series => ({
  label: 'job time',
  value: (_u, v) => (v === null ? '--' : format(v)),
});

/** Vertical markers and shaded x-ranges (a `draw` hook); `get` is called at every draw. */
export function xMarks(get: () => Marks): uPlot.Hooks.Arrays {
  return {
    draw: [
      (u) => {
        const { ctx } = u;
        const { top, height } = u.bbox;
        const m = get();
        ctx.save();
        for (const b of m.bands) {
          const x0 = u.valToPos(b.from, 'x', true);
          const x1 = u.valToPos(b.to, 'x', true);
          ctx.fillStyle = b.color;
          ctx.fillRect(Math.min(x0, x1), top, Math.abs(x1 - x0), height);
        }
        for (const l of m.lines) {
          const x = u.valToPos(l.x, 'x', true);
          ctx.strokeStyle = l.color;
          ctx.lineWidth = 2 * devicePixelRatio;
          ctx.setLineDash((l.dash ?? []).map((d) => d * devicePixelRatio));
          ctx.beginPath();
          ctx.moveTo(x, top);
          ctx.lineTo(x, top + height);
          ctx.stroke();
        }
        ctx.restore();
      },
    ],
  };
}

/** Aligns several (x, y) tables on one sorted x axis (uPlot's own join), nulls where a table has no point. */
export function align(tables: readonly (readonly [number[], (number | null)[]])[]): uPlot.AlignedData {
  return uPlot.join(tables.map(([x, y]) => [x, y] as uPlot.AlignedData));
}
