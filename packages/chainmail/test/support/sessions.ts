import type { Dovecot } from "../../src/testing/dovecot.js";

/**
 * How long a count of Dovecot sessions may take to settle. Each poll runs doveadm synchronously,
 * blocking the test's process (where the code under test closes its connections) while it runs, so
 * on loaded cores a few seconds allow only a few polls. A leak keeps its sessions open far longer
 * (Dovecot drops an idle authenticated session after 30 minutes), so waiting longer lets none through.
 */
export const SESSIONS_MS = 15_000;

/**
 * `until(what, ok, ms)`: resolves once `ok()` holds, polling every 50 ms; after `ms` it fails with
 * `what` and the number of IMAP sessions `user` has.
 */
export function sessionWaiter(dv: () => Dovecot, user: string) {
  return async (what: string, ok: () => boolean, ms = 30_000): Promise<void> => {
    const end = Date.now() + ms;
    while (!ok()) {
      if (Date.now() > end)
        throw new Error(
          `timed out waiting for ${what} (${user} has ${dv().sessionCount(user)} IMAP sessions)`,
        );
      await new Promise((r) => setTimeout(r, 50));
    }
  };
}
