/** How many failed sign-ins are let through per window, per account and per address. */
export interface LimiterOptions {
  perAccount: number;
  perAddress: number;
  windowMs: number;
  now: () => number;
}

export const DEFAULT_LIMITS = { perAccount: 5, perAddress: 20, windowMs: 15 * 60_000 };

/** Bounds what one map may hold, so a flood of made-up names cannot grow memory without end. */
const MAX_KEYS = 10_000;

/**
 * Failed sign-ins counted in a fixed window per account name and per client address. Past either
 * limit every attempt is refused before its password is even checked, until the window ends.
 */
export class SignInLimiter {
  private readonly accounts = new Map<string, { count: number; since: number }>();
  private readonly addresses = new Map<string, { count: number; since: number }>();
  private readonly o: LimiterOptions;

  constructor(options: Partial<LimiterOptions> = {}) {
    this.o = { ...DEFAULT_LIMITS, now: Date.now, ...options };
  }

  /** Milliseconds until another attempt is allowed; 0 when it is allowed now. */
  wait(account: string, address: string): number {
    const now = this.o.now();
    const a = this.live(this.accounts, account.toLowerCase(), now);
    const b = this.live(this.addresses, address, now);
    const waits = [
      a && a.count >= this.o.perAccount ? a.since + this.o.windowMs - now : 0,
      b && b.count >= this.o.perAddress ? b.since + this.o.windowMs - now : 0,
    ];
    return Math.max(0, ...waits);
  }

  failed(account: string, address: string): void {
    const now = this.o.now();
    for (const [map, key] of [
      [this.accounts, account.toLowerCase()],
      [this.addresses, address],
    ] as const) {
      const entry = this.live(map, key, now) ?? { count: 0, since: now };
      entry.count++;
      map.set(key, entry);
      if (map.size > MAX_KEYS) this.prune(map, now);
    }
  }

  succeeded(account: string): void {
    this.accounts.delete(account.toLowerCase());
  }

  private live(map: Map<string, { count: number; since: number }>, key: string, now: number) {
    const e = map.get(key);
    if (e && now - e.since >= this.o.windowMs) {
      map.delete(key);
      return undefined;
    }
    return e;
  }

  private prune(map: Map<string, { count: number; since: number }>, now: number): void {
    for (const [k, e] of map) if (now - e.since >= this.o.windowMs) map.delete(k);
    // Still full of live entries: the oldest go first (a Map iterates in insertion order).
    for (const k of map.keys()) {
      if (map.size <= MAX_KEYS) break;
      map.delete(k);
    }
  }
}

/** At most `max` events per key in a fixed window (client registrations per address). */
export class WindowCounter {
  private readonly counts = new Map<string, { count: number; since: number }>();

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one event; false when the key is already at its limit (the event is not counted). */
  take(key: string): boolean {
    const now = this.now();
    let e = this.counts.get(key);
    if (!e || now - e.since >= this.windowMs) e = { count: 0, since: now };
    if (e.count >= this.max) return false;
    e.count++;
    this.counts.set(key, e);
    if (this.counts.size > MAX_KEYS)
      for (const [k, v] of this.counts) if (now - v.since >= this.windowMs) this.counts.delete(k);
    return true;
  }
}
