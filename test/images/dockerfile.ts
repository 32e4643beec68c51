/**
 * Just enough of a Dockerfile reader to lay out an image's final stage on disk: its base, user,
 * working directory, entrypoint/cmd and the files it copies from the build stage.
 */
import { readFileSync } from 'node:fs';

export interface FinalStage {
  readonly base: string;
  readonly stages: number;
  readonly user: string;
  readonly workdir: string;
  readonly entrypoint: readonly string[];
  readonly cmd: readonly string[];
  /** `COPY --from=<stage> <src> <dest>` of the final stage: files taken from the build stage. */
  readonly copies: readonly { readonly from: string; readonly src: string; readonly dest: string }[];
  /** `COPY <src…> <dest>` of every stage: paths taken from the build context. */
  readonly contextSources: readonly string[];
}

const execForm = (line: string | undefined): string[] => (line ? (JSON.parse(line) as string[]) : []);

export function readDockerfile(path: string): FinalStage {
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const froms = lines.map((l, i) => [l, i] as const).filter(([l]) => /^FROM /i.test(l));
  const lastFrom = froms.at(-1)?.[1] ?? 0;
  const final = lines.slice(lastFrom);
  const arg = (instr: string) =>
    final
      .filter((l) => l.startsWith(`${instr} `))
      .map((l) => l.slice(instr.length + 1))
      .at(-1);
  const contextSources = lines
    .filter((l) => /^COPY /.test(l) && !l.includes('--from='))
    .flatMap((l) => l.split(/\s+/).slice(1, -1));
  return {
    base: (final[0] ?? '').split(/\s+/)[1] ?? '',
    stages: froms.length,
    user: arg('USER') ?? 'root',
    workdir: arg('WORKDIR') ?? '/',
    entrypoint: execForm(arg('ENTRYPOINT')),
    cmd: execForm(arg('CMD')),
    copies: final
      .filter((l) => /^COPY --from=/.test(l))
      .map((l) => {
        const [, from, src, dest] = /^COPY --from=(\S+)\s+(\S+)\s+(\S+)$/.exec(l) ?? [];
        return { from: from ?? '', src: src ?? '', dest: dest ?? '' };
      }),
    contextSources,
  };
}
