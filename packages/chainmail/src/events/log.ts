/**
 * The event log: what the cache's syncs reveal (new, flags, expunged, gap), accounts' connection
 * state (status) and work items (item, item_mail), kept in state.db for `retention_seconds`, read
 * by cursor or by consumer group, with long-polling. Knows nothing of MCP or the socket: a read
 * returns its page and a `commit` that acknowledges it, which the caller runs once the reply is out.
 */
import type { ItemChange } from "../items/model.js";
import { MailError } from "../errors.js";
import type { SearchRow } from "../service/search/index.js";
import type { StateDb } from "../store/state.js";
import { type EventInput, type EventRow, EventStore } from "../store/events.js";
import { GROUP_LEASE_MS, GroupLeases } from "./leases.js";
import { ALWAYS_KINDS, EVENT_KINDS, type EventKind, OPT_IN_KINDS } from "./limits.js";

export interface MailEvent {
  id: number;
  time: string;
  kind: EventKind;
  /** null only for a gap that concerns every account (retention, an unknown cursor). */
  account: string | null;
  folder?: string;
  item_id?: string;
  ref?: string;
  /** new and item_mail: the message's search row. */
  row?: SearchRow;
  flags?: string[];
  keywords?: string[];
  labels?: string[];
  /** status: ok or error; gap: why events are missing. */
  state?: "ok" | "error";
  error?: string;
  reason?: "first_sync" | "uidvalidity" | "retention" | "cursor";
  /** item: what happened to the item, and the revision of that change. */
  change?: ItemChange;
  revision?: number;
  thread_key?: string;
}

export interface ReadEventsParams {
  accounts: string[];
  cursor?: number | undefined;
  group?: string | undefined;
  /** Who reads a group: its own page out does not keep it waiting (./leases.ts). */
  reader?: string | undefined;
  in?: string | undefined;
  item?: string | undefined;
  kinds: EventKind[];
  limit: number;
  wait_seconds: number;
}

export interface ReadEventsResult {
  events: MailEvent[];
  next_cursor: number;
}

export interface EventLogOptions {
  retentionSeconds: () => number;
  /** The work items linked to a thread; without an items store, none. */
  linkedItems?: (account: string, threadKey: string) => string[];
  /**
   * An item and its ancestors as the tree is now (where an event of it happens), or null when there
   * is no such item; without an items store, none is known.
   */
  itemPath?: (itemId: string) => string[] | null;
  now?: () => number;
  /** Where a failed pruning is said (the daemon's log). */
  log?: (line: string) => void;
  /** How often the retention runs (tests). */
  pruneEveryMs?: number;
  /** How long a group's page may stay out unacknowledged (tests; see ./leases.ts). */
  leaseMs?: number;
}

/** One read's answer: `commit` once the reader has the page, `release` when it never will. */
export interface ReadAnswer {
  result: ReadEventsResult;
  commit: () => void;
  release: () => void;
}

const PRUNE_EVERY_MS = 60_000;

export class EventLog {
  readonly store: EventStore;
  private readonly waiters = new Set<() => void>();
  private wakeQueued = false;
  private closed = false;
  private readonly pruneTimer: NodeJS.Timeout;
  private readonly now: () => number;
  private readonly leases: GroupLeases;
  linkedItems: (account: string, threadKey: string) => string[];
  itemPath: (itemId: string) => string[] | null;

  constructor(
    state: StateDb,
    private readonly options: EventLogOptions,
  ) {
    this.store = new EventStore(state.db);
    this.now = options.now ?? Date.now;
    this.linkedItems = options.linkedItems ?? (() => []);
    this.itemPath = options.itemPath ?? (() => null);
    this.leases = new GroupLeases(this.now, options.leaseMs ?? GROUP_LEASE_MS, () => this.wake());
    this.prune();
    this.pruneTimer = setInterval(() => this.pruneOrSay(), options.pruneEveryMs ?? PRUNE_EVERY_MS);
    this.pruneTimer.unref();
  }

  /**
   * Records an event unless the same one (account, folder, UIDVALIDITY, UID, kind, change) is
   * already there; a failing store throws, so the cache change that revealed it does not commit.
   */
  record(e: EventInput): number | null {
    const id = this.store.insert({ ...e, time: e.time ?? new Date(this.now()).toISOString() });
    if (id !== null) this.wake();
    return id;
  }

  /** A new message: an item_mail event for each item its thread is linked to. */
  newMail(at: Omit<EventInput, "kind" | "change" | "data">, row: SearchRow): void {
    for (const itemId of this.linkedItems(row.account, row.thread_id)) {
      this.record({
        ...at,
        kind: "item_mail",
        change: itemId,
        itemId,
        itemPath: this.itemPath(itemId) ?? [itemId],
        data: { ref: row.ref, row, thread_key: row.thread_id },
      });
    }
  }

  /**
   * A work item changed (recorded by the items store, once per revision). `place`: the item and
   * its ancestors at the change (a move: before and after), which read_events' `item` filters on.
   */
  item(
    itemId: string,
    revision: number,
    change: ItemChange,
    place: readonly string[] = [itemId],
  ): number | null {
    return this.record({
      kind: "item",
      account: "",
      itemId,
      itemPath: place,
      change: `${itemId}:${revision}`,
      data: { change, revision },
    });
  }

  /** An account's connection state; recorded only when it differs from the last one recorded. */
  status(account: string, ok: boolean, error?: string): void {
    // A stopping daemon closes the log first: a watch whose connection the stop itself ends
    // reports that after, when state.db may be closed too, and it is no change of the account's
    if (this.closed) return;
    const state = ok ? "ok" : "error";
    const last = this.store.lastStatus(account);
    if (last && (JSON.parse(last) as { state?: string }).state === state) return;
    const time = new Date(this.now()).toISOString();
    this.record({
      kind: "status",
      account,
      // The log's position makes two changes within one millisecond two events.
      change: `${state}@${time}#${this.store.lastId()}`,
      time,
      data: { state, ...(error ? { error } : {}) },
    });
  }

  prune(): number {
    const before = new Date(this.now() - this.options.retentionSeconds() * 1000).toISOString();
    return this.store.prune(before);
  }

  /**
   * The retention as the timer and each read run it: a failure (state.db locked by another process
   * past its busy timeout, a full disk) is said in the log and tried again next time. Thrown from
   * the timer it would end the daemon; from a read, fail a read that only had to skip old events.
   */
  private pruneOrSay(): void {
    try {
      this.prune();
    } catch (err) {
      this.options.log?.(`events: pruning old events failed, tried again later: ${(err as Error).message}`);
    }
  }

  /** Waiters re-read after the current synchronous work (a cache transaction) has committed. */
  private wake(): void {
    if (this.wakeQueued) return;
    this.wakeQueued = true;
    setImmediate(() => {
      this.wakeQueued = false;
      for (const w of [...this.waiters]) w();
    });
  }

  /** The kinds a read returns, by read_events' rules for `kinds` and `item`. */
  static effectiveKinds(kinds: EventKind[], item: boolean): EventKind[] {
    if (kinds.length === 0)
      return item
        ? ["item", "item_mail", ...ALWAYS_KINDS]
        : EVENT_KINDS.filter((k) => !OPT_IN_KINDS.includes(k));
    const out = new Set(kinds);
    if (!kinds.some((k) => ALWAYS_KINDS.includes(k))) for (const k of ALWAYS_KINDS) out.add(k);
    // With item, mail events of no item are left out whatever kinds says.
    if (item) for (const k of ["new", "flags", "expunged"] as const) out.delete(k);
    return [...out];
  }

  private page(p: ReadEventsParams, after: number, kinds: EventKind[]) {
    this.pruneOrSay();
    const last = this.store.lastId();
    const pruned = this.store.prunedThrough();
    const events: MailEvent[] = [];
    let from = after;
    const gap = (reason: "retention" | "cursor", id: number) => {
      if (kinds.includes("gap"))
        events.push({ id, time: new Date(this.now()).toISOString(), kind: "gap", account: null, reason });
    };
    if (after > last) {
      // A position this log never handed out (state.db was replaced): everything kept is news. The
      // read goes on from just before the first kept event (every id up to `pruned` is deleted).
      gap("cursor", 0);
      from = pruned;
    } else if (after < pruned) {
      // Events after this position were deleted unread, whoever holds it: a cursor or group that
      // fell behind, cursor 0 (a reader that has read nothing yet) or a group at 0 (started on an
      // empty log). Each is told, in the same shape, before the oldest kept event.
      gap("retention", pruned);
      from = pruned;
    }
    const want = p.limit - events.length;
    // A gap that fills the page (limit 1) reads nothing more: the next read starts just before the
    // first kept event, so nothing after the gap is skipped (or, for a group, acknowledged unseen).
    if (want === 0) return { events, next_cursor: from };
    const inNames = p.in ? inNamesOf(p.in) : [];
    const rows = this.store.read({
      after: from,
      accounts: p.accounts,
      kinds,
      inNames,
      item: p.item ?? null,
      limit: want,
    });
    events.push(...rows.map(toEvent));
    // A short page examined every event up to the last id, so the next read starts after it.
    const next = rows.length === want ? rows[rows.length - 1]!.id : Math.max(from, last);
    return { events, next_cursor: next };
  }

  /**
   * One read_events call. Waits up to `wait_seconds` for a matching event when none is ready, and
   * returns early when `signal` aborts (the reader hung up) or the log closes (shutdown). `commit`
   * moves the group's position to `next_cursor`; the caller runs it only once the reply is delivered,
   * and `release` when it never will be. A group's page is out to one read at a time (./leases.ts):
   * another read of the group waits for it as for an event.
   */
  async read(p: ReadEventsParams, signal?: AbortSignal): Promise<ReadAnswer> {
    if (p.cursor !== undefined && p.group !== undefined)
      throw new MailError(
        "INVALID_ARGUMENT",
        "cursor and group cannot be used together",
        "Pass one of them.",
      );
    if (p.item !== undefined && !this.itemPath(p.item))
      throw new MailError(
        "NOT_FOUND",
        `no work item ${JSON.stringify(p.item)}`,
        "list_items gives the item IDs.",
      );
    const kinds = EventLog.effectiveKinds(p.kinds, p.item !== undefined);
    // A group that has never read starts at the log's end: an agent that starts waiting for mail
    // wants the mail that arrives from now on, not the history kept for retention_seconds and the
    // first sync's gap and status events (cursor 0 still reads those). The start is stored before
    // the first page, so an event recorded while this read waits, or after it was cut off, is news.
    if (p.group !== undefined && !this.store.group(p.group)) this.store.ack(p.group, this.store.lastId());
    const deadline = this.now() + p.wait_seconds * 1000;
    const position = () =>
      p.group !== undefined ? (this.store.group(p.group)?.acked ?? 0) : (p.cursor ?? 0);
    for (;;) {
      const held = p.group !== undefined ? this.leases.heldFor(p.group, p.reader) : 0;
      const at = position();
      // Another read's page of this group is out: nothing for this one until that is settled.
      const result = held > 0 ? { events: [], next_cursor: at } : this.page(p, at, kinds);
      const left = deadline - this.now();
      if (result.events.length > 0 || left <= 0 || this.closed || signal?.aborted)
        return this.answer(p, result, held === 0 && result.next_cursor !== at && !signal?.aborted);
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.waiters.delete(done);
          signal?.removeEventListener("abort", done);
          resolve();
        };
        const timer = setTimeout(done, held > 0 ? Math.min(left, held) : left);
        this.waiters.add(done);
        signal?.addEventListener("abort", done, { once: true });
      });
    }
  }

  /** A read's answer; a group page that moves the group holds it until settled (`lease`). */
  private answer(p: ReadEventsParams, result: ReadEventsResult, lease: boolean): ReadAnswer {
    const group = p.group;
    if (group === undefined) return { result, commit: () => undefined, release: () => undefined };
    const held = lease ? this.leases.take(group, result.next_cursor, p.reader) : null;
    return {
      result,
      commit: () => {
        this.ack(group, result.next_cursor);
        if (held) this.leases.end(group, held);
      },
      release: () => (held ? this.leases.end(group, held) : undefined),
    };
  }

  /**
   * Moves a group to `position` (a read's next_cursor), never back, except for a group whose
   * position is past the log's end (its read was a `cursor` gap and started over from the oldest
   * kept event, behind that position). A page out that this covers is settled.
   */
  ack(group: string, position: number): void {
    const acked = this.store.group(group)?.acked ?? 0;
    this.store.ack(group, position, acked > this.store.lastId());
    this.leases.acked(group, this.store.group(group)?.acked ?? position);
  }

  /** How many reads are waiting for an event now (the watches poll their folders only then). */
  get waiting(): number {
    return this.waiters.size;
  }

  /** Wakes every waiter (they answer with what they have) and stops pruning. */
  close(): void {
    this.closed = true;
    clearInterval(this.pruneTimer);
    for (const w of [...this.waiters]) w();
  }
}

/** `in` in any case; `inbox` also matches the Gmail label \Inbox and `sent` the label \Sent. */
export function inNamesOf(name: string): string[] {
  const n = name.toLowerCase();
  if (n === "inbox") return ["inbox", "\\inbox"];
  if (n === "sent") return ["sent", "\\sent"];
  return [n];
}

function toEvent(r: EventRow): MailEvent {
  const data = JSON.parse(r.data) as Partial<MailEvent>;
  return {
    id: r.id,
    time: r.time,
    kind: r.kind,
    account: r.account === "" ? null : r.account,
    ...(r.folder ? { folder: r.folder } : {}),
    ...(r.item_id ? { item_id: r.item_id } : {}),
    ...data,
  };
}
