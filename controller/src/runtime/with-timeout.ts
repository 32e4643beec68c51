/** Waits for `p` at most `ms` (real time); a rejection of `p` rejects, a timeout resolves. */
export async function withTimeout(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  try {
    await Promise.race([p.then(() => undefined), timeout]);
  } finally {
    // Also on a rejection: a pending timer would keep the process alive for up to `ms`.
    clearTimeout(timer);
  }
}
