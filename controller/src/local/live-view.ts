/** The live per-job view on a terminal: shape, progress and predicted completion, redrawn in place. */
import type { Controller } from '../runtime/controller';

interface ViewJob {
  name: string;
  phase: string;
  shape: { ps: number; workers: number } | null;
  restarts: number;
  observations: { stepsDone: number };
  models: { remaining: { steps: number } } | null;
  plan: { predictedCompletionTs: { value: number } | null };
  jct: number | null;
}

export function startLiveView(ctl: Controller, out: NodeJS.WriteStream): { stop(): void } {
  let lines = 0;
  const draw = () => {
    const jobs = ctl.list() as unknown as ViewJob[];
    const rows = jobs.map((j) => {
      const shape = j.shape ? `${j.shape.ps}ps×${j.shape.workers}w` : '—';
      const done = j.observations.stepsDone;
      const total = j.models ? done + j.models.remaining.steps : null;
      const pct = j.phase === 'done' ? 100 : total ? Math.min(99, Math.round((100 * done) / total)) : 0;
      const bar = '█'.repeat(Math.round(pct / 5)).padEnd(20, '░');
      const eta = j.plan.predictedCompletionTs
        ? `done ~${new Date(j.plan.predictedCompletionTs.value).toLocaleTimeString()}`
        : '';
      const jct = j.jct !== null ? `JCT ${Math.round(j.jct)} s` : eta;
      return `${j.name.padEnd(14)} ${j.phase.padEnd(8)} ${shape.padEnd(9)} ${bar} ${String(pct).padStart(3)}%  restarts ${j.restarts}  ${jct}`;
    });
    const text = [`optimus local — ${jobs.length} jobs, ${ctl.decisionCount} decisions`, ...rows];
    out.write(`${lines > 0 ? `\x1b[${lines}F\x1b[J` : ''}${text.join('\n')}\n`);
    lines = text.length;
  };
  const timer = setInterval(draw, 1000);
  return { stop: () => clearInterval(timer) };
}
