/** Minimal JSON-lines logger on stderr (pino would cost bundle size and memory in every training pod). */

export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  debug(msg: string, fields?: Record<string, unknown>): void;
}

/** Creates a logger; debug lines are written only when `debug` is set. */
export function createLogger(
  debug: boolean,
  write: (line: string) => void = (l) => process.stderr.write(l),
): Logger {
  const out = (level: string, msg: string, fields?: Record<string, unknown>): void =>
    write(`${JSON.stringify({ level, time: new Date().toISOString(), msg, ...fields })}\n`);
  return {
    info: (m, f) => out('info', m, f),
    warn: (m, f) => out('warn', m, f),
    debug: (m, f) => {
      if (debug) out('debug', m, f);
    },
  };
}
