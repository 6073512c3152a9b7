/**
 * A stored secret that is there but cannot be read (a link to itself here; for another user, its
 * permissions) through the daemon: the accounts list still answers, naming the account's sign-in
 * "unknown", and test_account's IMAP check and a call that logs in (a partial of list_folders) fail with AUTH_REQUIRED saying which file and why, never as an
 * internal error. The other account is not affected.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { secretFile } from "../src/secrets.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

let env: MailEnv;
beforeAll(async () => {
  env = await startMailEnv({});
});
afterAll(async () => {
  await env?.stop();
});

it("lists the accounts and says why a login cannot use an unreadable secret", async () => {
  const file = secretFile(env.home.secretsDir, "work");
  fs.rmSync(file);
  fs.symlinkSync(path.basename(file), file);
  const { accounts } = await env.client.listAccounts();
  expect(accounts.map((a) => [a.name, a.auth])).toEqual([
    ["work", "unknown"],
    ["home", expect.stringMatching(/^(ok|unknown)$/)],
  ]);
  const said = {
    reason: "AUTH_REQUIRED",
    message: `the stored secret of account work cannot be read (ELOOP: ${file})`,
  };
  expect((await env.client.testAccount({ account: "work" })).imap).toMatchObject({ ok: false, error: said });
  const folders = await env.client.listFolders({ accounts: ["work", "home"] });
  // One account's failure is that account's part of the answer; the other's folders are listed
  expect(folders.partial).toEqual([{ account: "work", error: expect.objectContaining(said) }]);
  expect(folders.accounts.map((a) => a.account)).toEqual(["home"]);
  expect((await env.client.testAccount({ account: "home" })).imap).toMatchObject({ ok: true });
});
