import type { Command } from 'commander';

// Placeholder registration: the commands of this module are added by its issue's work.
export function registerPredictCommands(_program: Command): void {}
