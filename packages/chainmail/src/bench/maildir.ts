import fs from "node:fs";
import path from "node:path";
import { mailboxMessage } from "../testing/mailbox.js";

/**
 * Writes messages `from` to `to` of an `n`-message mailbox (src/testing/mailbox.ts) into a Maildir's
 * `cur`, owned by `owner` (Dovecot's user) and dated as each message, with its flags in the name.
 */
export function writeMaildir(cur: string, owner: fs.Stats, from: number, to: number, n: number, now: Date) {
  for (let i = from; i < to; i++) {
    const m = mailboxMessage(i, n, { now });
    const flags = `${m.flags.includes("\\Flagged") ? "F" : ""}${m.flags.includes("\\Seen") ? "S" : ""}`;
    const file = path.join(
      cur,
      `${Math.floor(m.date.getTime() / 1000)}.M${i}P1.bench,S=${Buffer.byteLength(m.raw)}:2,${flags}`,
    );
    fs.writeFileSync(file, m.raw);
    fs.utimesSync(file, m.date, m.date);
    fs.chownSync(file, owner.uid, owner.gid);
  }
}
