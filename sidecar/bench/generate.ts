/** Synthetic MXNet logs for the benchmark: every Speedometer form, with prefixes and some noise. */

const PREFIXES = ['', 'INFO:root:', '2017-06-01 10:00:00,123 Node[3] ', '[1,0]<stdout>:'];

/** One log line for batch `i` (0-based), cycling through the MXNet forms. */
export function mxnetLine(i: number): string {
  const epoch = Math.floor(i / 1000);
  const b = (i % 1000) * 50;
  const prefix = PREFIXES[i % PREFIXES.length] ?? '';
  switch (i % 10) {
    case 0:
      return `${prefix}Epoch[${epoch}] Batch [${b}]\tSpeed: 1.08 samples/sec\taccuracy=0.500000`;
    case 1:
      return `${prefix}Iter[${epoch}] Batch [${b}]\tSpeed: 812.44 samples/sec`;
    case 2:
      return `${prefix}Epoch[${epoch}] Train-accuracy=0.812000`;
    case 3:
      return 'Running performance tests to find the best convolution algorithm, this can take a while...';
    default:
      return `${prefix}Epoch[${epoch}] Batch [${b}-${b + 50}]\tSpeed: 1024.35 samples/sec\taccuracy=0.123000\tcross-entropy=2.301000`;
  }
}

/** `count` lines joined with newlines. */
export function mxnetLog(count: number): Buffer {
  const lines: string[] = new Array<string>(count);
  for (let i = 0; i < count; i++) lines[i] = mxnetLine(i);
  return Buffer.from(`${lines.join('\n')}\n`);
}
