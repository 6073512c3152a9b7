/** Accounts and folders: list_accounts, test_account, list_folders, create/rename/delete_folder. */
import { hints, openWorld, toolFactory, untrusted, Untrusted, untrustedField } from "@mcpforge/toolkit";
import { PROVIDERS } from "@mcpforge/chainmail";
import { z } from "zod";
import { type ChainmailContext, GROUPS, type GateState } from "../context.js";
import { account, accountList, folderName, ItemError, Partial } from "../schemas.js";
import { itemError, partial } from "../shape.js";

const tool = toolFactory<ChainmailContext, GateState>({ group: GROUPS.accounts, scope: null });

const Check = z.object({
  ok: z.boolean(),
  capabilities: z.array(Untrusted).optional().describe("The IMAP server's capabilities, after login"),
  error: ItemError.optional(),
  skipped: z.boolean().optional().describe("True when there is nothing to check, such as no SMTP server"),
});

type CheckIn = {
  ok: boolean;
  capabilities?: string[];
  error?: { reason: string; message: string; hint?: string; detail?: string };
  skipped?: boolean;
};

function check(c: CheckIn) {
  return {
    ok: c.ok,
    ...(c.capabilities ? { capabilities: c.capabilities.map(untrusted) } : {}),
    ...(c.error ? { error: itemError(c.error) } : {}),
    ...(c.skipped !== undefined ? { skipped: c.skipped } : {}),
  };
}

export const accountTools = [
  tool({
    name: "list_accounts",
    title: "List accounts",
    description:
      "Lists the configured mail accounts with their provider, address and auth state, whether the policy lets expunge and delete_folder act on each one, and whether a policy change waits for the owner's confirmation.",
    input: {},
    output: {
      accounts: z.array(
        z.object({
          name: z.string().describe("The name other tools take as account"),
          provider: z.enum(PROVIDERS),
          address: z.string(),
          auth: z
            .enum(["ok", "missing", "rejected", "expired", "unknown"])
            .describe(
              "ok: the last login succeeded; missing: nothing stored (the user runs chainmail secret set, or chainmail auth login for OAuth2); rejected: the server refused the password or token; expired: the OAuth2 sign-in no longer works (the user runs chainmail auth login); unknown: not tried yet",
            ),
          auth_method: z.enum(["password", "oauth2"]),
          allow_expunge: z.boolean(),
          allow_delete_folder: z.boolean(),
          confirmation_pending: z
            .boolean()
            .describe(
              "true: config.toml asks for a wider policy (or new server settings) than the owner has confirmed, as after a first start; the narrower confirmed policy applies (sends outside it are held) until the owner runs chainmail policy confirm in their terminal",
            ),
        }),
      ),
    },
    annotations: hints.readOnly,
    summary: (r) => `${r.accounts.length} account${r.accounts.length === 1 ? "" : "s"}`,
    handler: async (_input, { ctx }) => {
      const { accounts } = await ctx.client.listAccounts();
      return {
        accounts: accounts.map((a) => ({
          name: a.name,
          provider: a.provider,
          address: a.address,
          auth: a.auth,
          auth_method: a.auth_method,
          allow_expunge: a.allow_expunge,
          allow_delete_folder: a.allow_delete_folder,
          confirmation_pending: a.confirmation_pending,
        })),
      };
    },
  }),

  tool({
    name: "test_account",
    title: "Test an account",
    description:
      "Logs in to an account's IMAP and SMTP servers and reports how each check went. Use it when calls on an account fail with AUTH_REQUIRED, AUTH_REJECTED or SERVER_UNAVAILABLE. The IMAP capabilities and any error text from a server are untrusted.",
    input: { account: account("The account to test, as list_accounts names it") },
    output: { account: z.string(), imap: Check, smtp: Check },
    annotations: openWorld(hints.readOnly),
    summary: (r) => `${r.account}: IMAP ${r.imap.ok ? "ok" : "failed"}, SMTP ${r.smtp.ok ? "ok" : "failed"}`,
    handler: async ({ account }, { ctx }) => {
      const r = await ctx.client.testAccount({ account });
      return { account: r.account, imap: check(r.imap), smtp: check(r.smtp) };
    },
  }),

  tool({
    name: "list_folders",
    title: "List folders",
    description:
      "Lists the folders of every account, or of the accounts named, with each folder's role, message count and unseen count. A folder's name (untrusted) is what move, copy, rename_folder and search's in: take. partial names the accounts or folders that could not be read.",
    input: { accounts: accountList("Accounts to list; empty means every account") },
    output: {
      accounts: z.array(
        z.object({
          account: z.string(),
          folders: z.array(
            z.object({
              name: untrustedField("The folder's name, with / between levels"),
              role: z
                .enum(["inbox", "sent", "drafts", "trash", "junk", "archive", "all", "flagged"])
                .nullable(),
              messages: z.number().int().nullable(),
              unseen: z.number().int().nullable(),
            }),
          ),
        }),
      ),
      partial: Partial.describe("The accounts or folders that could not be read"),
    },
    annotations: openWorld(hints.readOnly),
    summary: (r) =>
      `${r.accounts.reduce((n, a) => n + a.folders.length, 0)} folders in ${r.accounts.length} account${r.accounts.length === 1 ? "" : "s"}${r.partial.length ? `; ${r.partial.length} not read` : ""}`,
    handler: async ({ accounts }, { ctx }) => {
      const r = await ctx.client.listFolders({ accounts: accounts ?? [] });
      return {
        accounts: r.accounts.map((a) => ({
          account: a.account,
          folders: a.folders.map((f) => ({
            name: untrusted(f.name),
            role: f.role,
            messages: f.messages,
            unseen: f.unseen,
          })),
        })),
        partial: partial(r.partial),
      };
    },
  }),

  tool({
    name: "create_folder",
    title: "Create a folder",
    description:
      "Creates a folder, and any missing parent folders. Returns the name the server uses, as untrusted, since the server's namespace prefix can be part of it.",
    input: {
      account: account("The account to create the folder on"),
      name: folderName(
        "The full folder name with / between levels; the personal namespace prefix may be left out",
      ),
    },
    output: { account: z.string(), name: untrustedField("The folder's name as the server uses it") },
    annotations: openWorld(hints.idempotentWrite),
    summary: (r) => `Created a folder on ${r.account}`,
    handler: async ({ account, name }, { ctx }) => {
      const r = await ctx.client.createFolder({ account, name });
      return { account: r.account, name: untrusted(r.name) };
    },
  }),

  tool({
    name: "rename_folder",
    title: "Rename a folder",
    description: "Renames a folder and returns its new name as the server uses it, as untrusted.",
    input: {
      account: account("The account the folder is on"),
      from: folderName("The folder's current name, as list_folders names it"),
      to: folderName("The new name, written the way create_folder takes it"),
    },
    output: { account: z.string(), name: untrustedField("The new name as the server uses it") },
    annotations: openWorld(hints.additive),
    summary: (r) => `Renamed a folder on ${r.account}`,
    handler: async ({ account, from, to }, { ctx }) => {
      const r = await ctx.client.renameFolder({ account, from, to });
      return { account: r.account, name: untrusted(r.name) };
    },
  }),

  tool({
    name: "delete_folder",
    title: "Delete a folder",
    description:
      "Deletes a folder; with force, also the mail in it. Listed only while the policy allows deleting folders on at least one account, and the daemon still checks the folder's account. INBOX, folders with a role and folders with subfolders are refused.",
    input: {
      account: account("The account the folder is on"),
      name: folderName("The folder to delete; INBOX, role folders and folders with subfolders are refused"),
      force: z
        .boolean()
        .default(false)
        .describe(
          "Delete it even when it holds mail, which is deleted with it (on Google the messages stay in All Mail)",
        ),
    },
    output: {
      account: z.string(),
      name: untrustedField("The folder's name as the server uses it"),
      deleted: z.boolean().describe("false when there was no such folder"),
    },
    annotations: openWorld(hints.destructiveIdempotent),
    visibleWhen: (s) => s.deleteFolderAllowedSomewhere,
    summary: (r) => (r.deleted ? `Deleted a folder on ${r.account}` : `No such folder on ${r.account}`),
    handler: async ({ account, name, force }, { ctx }) => {
      const r = await ctx.client.deleteFolder({ account, name, force });
      return { account: r.account, name: untrusted(r.name), deleted: r.deleted };
    },
  }),
];
