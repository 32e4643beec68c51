/** Reads the training output from standard input (`--log -`); end of input means the training ended. */
import type { TailSink } from './file-tailer';

/** Feeds stdin into the sink, pausing under backpressure; resolves `finished` at EOF. */
export function readStdin(
  sink: TailSink,
  stream: NodeJS.ReadableStream = process.stdin,
): { resume: () => void } {
  let pos = 0;
  let paused = false;
  stream.on('data', (chunk: Buffer) => {
    pos += chunk.length;
    sink.bytes(chunk, 0, chunk.length, pos, null);
    sink.endOfRead();
    if (!sink.canRead()) {
      paused = true;
      stream.pause();
    }
  });
  stream.on('end', () => {
    sink.fileEnded();
    sink.finished();
  });
  return {
    resume: () => {
      if (paused && sink.canRead()) {
        paused = false;
        stream.resume();
      }
    },
  };
}
