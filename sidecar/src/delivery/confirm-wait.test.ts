import { describe, expect, it } from 'vitest';
import { ConfirmWait } from './confirm-wait';

describe('ConfirmWait (ADR 0029)', () => {
  it('counts from the controller’s last chance, not from when the wait began', () => {
    let now = 1000;
    const w = new ConfirmWait(5000, () => now);
    w.restart(); // not waiting yet: nothing to start over
    expect(w.left()).toBe(5000); // begins now
    now += 4000;
    expect(w.left()).toBe(1000);
    w.restart(); // a new controller status, or a confirmation that advanced
    expect(w.left()).toBe(5000);
    now += 5000;
    expect(w.left()).toBe(0);
  });

  it('after a reconnect, begins again at the next look (once the broker has everything again)', () => {
    let now = 0;
    const w = new ConfirmWait(5000, () => now);
    expect(w.left()).toBe(5000);
    now += 6000;
    w.reset();
    now += 2000; // resending in the new session
    expect(w.left()).toBe(5000);
  });
});
