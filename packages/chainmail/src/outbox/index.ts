/**
 * Idempotent sends. Each send runs under its key: a key with a recorded send replays as
 * `duplicate`; a key whose send began and was never recorded (the daemon died in between) is
 * SEND_UNCONFIRMED until the account owner settles it with the CLI; a key whose earlier attempt was
 * held sent nothing, so the attempt is judged again; two calls with one key at the same moment run
 * one after the other, so the second sees the first's row. A key is tied to the input it was first
 * used for (its fingerprint): the same key with a different input is CONFLICT, never a `duplicate`
 * that would tell the caller a message went out that never did.
 */
import { MailError } from "../errors.js";
import { IDEMPOTENCY_WINDOW_MS } from "../limits.js";
import { type OutboxRow, OutboxStore } from "../store/outbox.js";
import type { StateDb } from "../store/state.js";

export { deriveKey } from "./key.js";

export interface DuplicateResult {
  status: "duplicate";
  original_status: "sent";
  idempotency_key: string;
}

const outboxes = new WeakMap<StateDb, Outbox>();

export function outboxOf(state: StateDb): Outbox {
  let o = outboxes.get(state);
  if (!o) {
    o = new Outbox(new OutboxStore(state.db));
    outboxes.set(state, o);
  }
  return o;
}

export function unconfirmed(key: string): MailError {
  return new MailError(
    "SEND_UNCONFIRMED",
    `a send with idempotency key ${key} began earlier and its outcome was never recorded, so it is not sent again`,
    `Do not retry. The account owner checks whether it arrived, then runs \`chainmail outbox confirm ${key}\` if it went out or \`chainmail outbox release ${key}\` to let a retry send it.`,
  );
}

export function conflict(key: string): MailError {
  return new MailError(
    "CONFLICT",
    `idempotency key ${key} was used earlier for a different message, so nothing was sent`,
    "A key names one message: use a new key for a new message, or send the same input again to retry it.",
  );
}

export class Outbox {
  private readonly inflight = new Map<string, Promise<void>>();
  constructor(readonly store: OutboxStore) {}

  /** The row a key has within the idempotency window, if any. */
  lookup(key: string, now = Date.now()): OutboxRow | undefined {
    // Pruning is a write (a commit, an fsync): at most once a minute, so a duplicate's answer is one
    // read. A row past the window is judged by its age here until the next prune removes it.
    if (now - this.prunedAt > 60_000) {
      this.store.prune(new Date(now - IDEMPOTENCY_WINDOW_MS).toISOString());
      this.prunedAt = now;
    }
    const row = this.store.get(key);
    const expired = row && row.status !== "pending" && Date.parse(row.created) < now - IDEMPOTENCY_WINDOW_MS;
    if (expired) this.store.remove(key);
    return expired ? undefined : row;
  }
  private prunedAt = 0;

  /**
   * Runs `fn` as the only holder of `key`, or replays the key's earlier outcome: CONFLICT when the
   * key was used for another input, `duplicate` for a recorded send, SEND_UNCONFIRMED for a send
   * never recorded. A held row is handed to `fn` to judge again. `fn` commits the intent (`begin`,
   * or `retake` of the held row) before it talks to SMTP.
   */
  async exclusive<T>(
    key: string,
    fingerprint: string,
    fn: (held: OutboxRow | undefined) => Promise<T>,
  ): Promise<T | DuplicateResult> {
    return this.lock(key, async () => {
      const row = this.lookup(key);
      if (row?.fingerprint && row.fingerprint !== fingerprint) throw conflict(key);
      if (row?.status === "sent")
        return { status: "duplicate", original_status: "sent", idempotency_key: key } as const;
      if (row?.status === "pending") throw unconfirmed(key);
      return fn(row);
    });
  }

  /** Resolves once no send of `key` is in flight here (its row then says how it ended). */
  async settled(key: string): Promise<void> {
    for (let wait = this.inflight.get(key); wait; wait = this.inflight.get(key)) await wait;
  }

  /** Runs `fn` once every earlier holder of `key` is done; later callers wait for it in turn. */
  async lock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    // (the loop, not `await this.settled(key)`: the check and the claim below must be one turn)
    for (let wait = this.inflight.get(key); wait; wait = this.inflight.get(key)) await wait;
    let release: () => void = () => undefined;
    this.inflight.set(
      key,
      new Promise<void>((r) => {
        release = r;
      }),
    );
    try {
      return await fn();
    } finally {
      this.inflight.delete(key);
      release();
    }
  }
}
