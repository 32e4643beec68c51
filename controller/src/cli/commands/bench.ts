import type { Command } from 'commander';

// Placeholder registration: the commands of this module are added by its issue's work.
export function registerBenchCommands(_program: Command): void {}
