/**
 * One page of a consumer group out at a time. A group read that returns a page holds the group
 * until that page is acknowledged (its commit, or a watch.ack reaching its next_cursor), its reply
 * is lost, or `leaseMs` passes; another read of the group meanwhile waits, then reads from the
 * acknowledged position. So readers sharing a group (two MCP servers, two agents) get each event
 * once, instead of both reading the same unacknowledged page; a holder that vanishes without a word
 * delays the others by `leaseMs` at most, and its page goes to the next reader (at least once).
 * A read that names the holder's `reader` (the same client: its retry after a lost reply) is not
 * kept waiting: it reads from the acknowledged position again and holds the group in turn.
 * In memory only: a daemon restart drops the leases, and the pages come again.
 */

/** How long a page may stay out unacknowledged before the group's other readers get it. */
export const GROUP_LEASE_MS = 10_000;

export interface Lease {
  /** The page's next_cursor: an acknowledgement that reaches it ends the lease. */
  readonly next: number;
  readonly until: number;
  /** The reader that holds it, when it named itself. */
  readonly holder: string | undefined;
}

export class GroupLeases {
  private readonly held = new Map<string, Lease>();

  constructor(
    private readonly now: () => number,
    private readonly leaseMs: number,
    /** Told when a lease ends, so the reads waiting for the group look again. */
    private readonly ended: () => void,
  ) {}

  /**
   * How long `group` stays held for `reader` by a page out, in ms; 0 when it is free or the page is
   * this reader's own (an expired lease ends here).
   */
  heldFor(group: string, reader: string | undefined): number {
    const lease = this.held.get(group);
    if (!lease || (reader !== undefined && lease.holder === reader)) return 0;
    const left = lease.until - this.now();
    if (left > 0) return left;
    this.held.delete(group);
    return 0;
  }

  take(group: string, next: number, holder: string | undefined): Lease {
    const lease = { next, until: this.now() + this.leaseMs, holder };
    this.held.set(group, lease);
    return lease;
  }

  /** Ends `lease` if it is still the group's (a later one, taken after it expired, stays). */
  end(group: string, lease: Lease): void {
    if (this.held.get(group) !== lease) return;
    this.held.delete(group);
    this.ended();
  }

  /** The group's position moved to `acked`: a lease whose page that covers has ended. */
  acked(group: string, acked: number): void {
    const lease = this.held.get(group);
    if (lease && acked >= lease.next) this.end(group, lease);
  }
}
