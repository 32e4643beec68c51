/**
 * How long a sidecar whose training ended still waits for the controller's confirmation once the
 * broker has acknowledged everything (ADR 0029). The wait is counted from the controller's last
 * chance to confirm, not from when the wait began: every event that gives it a new one starts the
 * wait over —
 *
 * - a (re)connect: everything unconfirmed goes again (the wait begins once the new session's broker
 *   has acknowledged it all: a restarted broker may have lost what the old one acknowledged);
 * - a controller status `online` not seen before (a controller that (re)connected, perhaps to a
 *   broker that lost its subscriptions): everything unconfirmed goes again;
 * - a confirmation that advanced: the controller lives and is storing.
 *
 * So a live controller that can reach the broker always gets the whole wait after it comes back,
 * while a controller that is gone (its Last Will, a stale retained status, none at all) holds the
 * sidecar for at most the wait after the last of these.
 */
export class ConfirmWait {
  /** When the current wait began; null while not waiting (or after a reconnect, until it begins). */
  private since: number | null = null;

  constructor(
    private readonly waitMs: number,
    private readonly now: () => number,
  ) {}

  /** A new session: the wait begins again once its broker has acknowledged everything. */
  reset(): void {
    this.since = null;
  }

  /** The controller got a new chance to confirm: a wait under way starts over from now. */
  restart(): void {
    if (this.since !== null) this.since = this.now();
  }

  /** Milliseconds left (0: may leave now); the first call after a reset begins the wait. */
  left(): number {
    const now = this.now();
    this.since ??= now;
    return Math.max(0, this.since + this.waitMs - now);
  }
}
