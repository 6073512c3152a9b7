import { normalName } from "../domain/names.js";
import type { AuthPort, Store } from "../store/index.js";
import { DUMMY_HASH, hashPassword, passwordProblem, verifyPassword } from "./secrets.js";

/** Local accounts' passwords: set by the admin CLI, checked by the sign-in page. */
export class Passwords {
  constructor(
    private readonly accounts: Store["accounts"],
    private readonly store: AuthPort,
    private readonly now: () => number = Date.now,
  ) {}

  /** Sets (or changes) a user's password; throws with the rule a weak one breaks. */
  async set(userName: string, password: string): Promise<void> {
    const user = await this.accounts.userByName(normalName(userName));
    if (!user) throw new Error(`no user "${userName}" (add one with dexi users add NAME)`);
    const problem = passwordProblem(password);
    if (problem) throw new Error(problem);
    await this.store.setPassword(user.id, await hashPassword(password), this.now());
  }

  /** The user id when the name and password match; an unknown name costs the same time as a wrong password. */
  async check(userName: string, password: string): Promise<number | undefined> {
    // The name as a user is kept (names.ts): " ann" or a decomposed "José" signs in as that user.
    const user = await this.accounts.userByName(normalName(userName));
    const stored = user ? await this.store.password(user.id) : undefined;
    const ok = await verifyPassword(password, stored ?? DUMMY_HASH);
    return ok && user && stored ? user.id : undefined;
  }
}
