/**
 * A reader of `text/event-stream` (the WHATWG server-sent events format) over a byte stream: yields
 * each message's `event` and `data` as the controller's `GET /api/v1/events` sends them. Comments
 * (`: keep-alive`) are skipped; `id` and `retry` are not used by our server and are ignored.
 */

export interface SseMessage {
  /** The `event:` field; `message` when absent, as in the specification. */
  readonly event: string;
  /** The `data:` lines, joined by newlines. */
  readonly data: string;
}

/** Feeds text chunks in, gets whole messages out; a message ends at an empty line. */
export class SseParser {
  private buffer = '';
  private event = '';
  private data: string[] = [];

  push(chunk: string): SseMessage[] {
    this.buffer += chunk;
    const out: SseMessage[] = [];
    let nl: number;
    while ((nl = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buffer.slice(0, nl);
      const width = this.buffer.startsWith('\r\n', nl) ? 2 : 1;
      // A lone \r at the end of a chunk may be the first half of \r\n: wait for the next chunk.
      if (this.buffer[nl] === '\r' && nl + 1 === this.buffer.length) break;
      this.buffer = this.buffer.slice(nl + width);
      const m = this.line(line);
      if (m) out.push(m);
    }
    return out;
  }

  private line(line: string): SseMessage | null {
    if (line === '') {
      const m = this.data.length > 0 ? { event: this.event || 'message', data: this.data.join('\n') } : null;
      this.event = '';
      this.data = [];
      return m;
    }
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    return null;
  }
}

/** The messages of a response body, until it ends or `signal` aborts. */
export async function* sseMessages(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal,
): AsyncGenerator<SseMessage> {
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const reader = body.getReader();
  const cancel = (): void => void reader.cancel().catch(() => undefined);
  signal.addEventListener('abort', cancel, { once: true });
  try {
    while (!signal.aborted) {
      const { done, value } = await reader.read();
      if (done) return;
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
  } finally {
    signal.removeEventListener('abort', cancel);
    reader.releaseLock();
  }
}
