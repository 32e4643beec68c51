import type { Linter } from 'eslint';

/** The architecture rules of `eslint.architecture.mjs`. */
export declare const architectureRules: Linter.Config[];
