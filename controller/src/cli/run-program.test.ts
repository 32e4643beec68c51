import { describe, expect, it } from 'vitest';
import { runOptimus } from './testing/run-in-process';
import { usageLine } from './run-program';

describe('usage errors: one line naming the command, then a pointer to its --help (issue 30)', () => {
  const cases: { name: string; argv: string[]; line: string }[] = [
    {
      name: 'unknown option',
      argv: ['simulate', '--bogus'],
      line: "optimus simulate: unknown option '--bogus'",
    },
    { name: 'unknown command', argv: ['nosuch'], line: "optimus: unknown command 'nosuch'" },
    {
      name: 'a flag value its parser refuses',
      argv: ['bench', 'schedule', '--jobs', 'x'],
      line: 'optimus bench schedule: --jobs must be an integer ≥ 1, got "x"',
    },
    {
      name: 'a missing required flag',
      argv: ['trace', 'export'],
      line: "optimus trace export: required option '--workload <name>' not specified",
    },
    {
      name: 'a value the action refuses',
      argv: ['trace', 'export', '--workload', 'nope'],
      line: 'optimus trace export: --workload must be one of paper, all-sync, all-async, poisson, bursty, large, stragglers, got "nope"',
    },
    {
      name: 'a flag combination the action refuses',
      argv: ['local', '--json'],
      line: 'optimus local: --json needs --exit-when-done (the run must end to print a result)',
    },
    {
      name: 'a command of the controller client',
      argv: ['why'],
      line: "optimus why: missing required argument 'name'",
    },
  ];
  for (const c of cases)
    it(c.name, async () => {
      const r = await runOptimus(c.argv);
      const command = c.line.slice(0, c.line.indexOf(':'));
      expect(r.stderr).toBe(`${c.line}\nSee '${command} --help'.\n`);
      expect(r.stdout).toBe('');
      expect(r.exitCode).toBe(1);
    });

  it('folds commander’s suggestion into the one line', () => {
    expect(usageLine('optimus x', "error: unknown option '--jsn'\n(Did you mean --json?)\n")).toBe(
      "optimus x: unknown option '--jsn' (Did you mean --json?)\nSee 'optimus x --help'.\n",
    );
  });

  it('still prints the help on --help, with exit code 0', async () => {
    const r = await runOptimus(['trace', 'export', '--help']);
    expect(r.stdout).toMatch(/^Usage: optimus trace export \[options\]/);
    expect(r.exitCode).toBe(0);
  });
});

describe('--json on every command that prints data', () => {
  it('trace export --json prints the trace as one JSON document (it was refused with the help)', async () => {
    const r = await runOptimus(['trace', 'export', '--workload', 'paper', '--jobs', '2', '--json']);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ format: 'optimus-trace', name: 'paper' });
  });

  it('is an option of every leaf command except the servers and the controller-client watchers', () => {
    // `kubernetes run` prints data only with --check-config, and has --json for it; every leaf has it.
    return import('./program').then(({ buildProgram }) => {
      const leaves: string[] = [];
      const walk = (c: ReturnType<typeof buildProgram>, path: string): void => {
        if (c.commands.length === 0) {
          if (!c.options.some((o) => o.long === '--json')) leaves.push(path);
        }
        for (const s of c.commands) walk(s, `${path} ${s.name()}`);
      };
      walk(buildProgram(), 'optimus');
      expect(leaves).toEqual([]);
    });
  });
});
