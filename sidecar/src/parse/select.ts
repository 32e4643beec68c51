/**
 * Chooses the parser for a configured format; `auto` tries every format, the last one that matched first,
 * so a log settles onto its framework after one line while mixed logs still parse.
 */
import type { Framework, LogFormat } from '../../../shared/src/schemas';
import { gluonParser } from './gluon';
import { huggingfaceParser } from './huggingface';
import { jsonlParser } from './jsonl';
import { kerasParser } from './keras';
import { lightningParser } from './lightning';
import { mxnetParser } from './mxnet';
import { tfEstimatorParser } from './tf-estimator';
import type { LineParser, ParseResult } from './types';

/** One parser per framework: a framework added to shared/src/schemas.ts without one fails to compile. */
const FACTORIES: Record<Framework, () => LineParser> = {
  mxnet: mxnetParser,
  gluon: gluonParser,
  keras: kerasParser,
  'tf-estimator': tfEstimatorParser,
  lightning: lightningParser,
  huggingface: huggingfaceParser,
  jsonl: jsonlParser,
};

/** Returns one parser for `format`; for `auto`, a most-recently-matched-first chain of all of them. */
export function createLineParser(format: LogFormat): LineParser {
  if (format !== 'auto') return FACTORIES[format]();
  const chain = Object.values(FACTORIES).map((f) => f());
  return {
    framework: 'mxnet',
    parse(line: string): ParseResult {
      for (let i = 0; i < chain.length; i++) {
        const p = chain[i] as LineParser;
        const r = p.parse(line);
        if (r !== null) {
          if (i > 0) chain.unshift(...chain.splice(i, 1));
          return r;
        }
      }
      return null;
    },
  };
}
