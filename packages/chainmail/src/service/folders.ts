import { MailError, toWireError, type WireError, partOfResult } from "../errors.js";
import {
  createFolder,
  deleteFolder,
  type FolderInfo,
  listAll,
  renameFolder,
  toInfo,
} from "../imap/folders.js";
import { type Call, type ServiceContext, accountOf, accountsOf, audit, audited, q } from "./context.js";
import { pendingHint } from "../policy/service.js";

export interface FolderRow {
  name: string;
  role: FolderInfo["role"];
  messages: number | null;
  unseen: number | null;
}

export interface ListFoldersResult {
  accounts: Array<{ account: string; folders: FolderRow[] }>;
  partial: Array<{ account: string; folder?: string; error: WireError }>;
}

export async function listFolders(
  ctx: ServiceContext,
  call: Call,
  names: string[],
): Promise<ListFoldersResult> {
  const accounts = accountsOf(ctx, names);
  const result: ListFoldersResult = { accounts: [], partial: [] };
  await Promise.all(
    accounts.map(async (a) => {
      try {
        const list = await ctx.pool.read(a, (c) => listAll(c, true));
        const folders: FolderRow[] = [];
        for (const f of list) {
          const info = toInfo(f);
          if (!info.selectable) continue;
          if (info.messages === null) {
            result.partial.push({
              account: a.name,
              folder: info.name,
              error: {
                reason: "SERVER_UNAVAILABLE",
                message: "the server gave no counts for this folder",
                hint: "",
              },
            });
          }
          folders.push({ name: info.name, role: info.role, messages: info.messages, unseen: info.unseen });
        }
        result.accounts.push({ account: a.name, folders });
        audit(ctx, call, a.name, "allowed", `${folders.length} folder(s)`);
      } catch (err) {
        result.partial.push({
          account: a.name,
          error: partOfResult(err, ctx.log, `list_folders of ${a.name}`),
        });
        audit(ctx, call, a.name, "error", `list folders: ${toWireError(err).reason}`);
      }
    }),
  );
  const order = new Map(accounts.map((a, i) => [a.name, i]));
  result.accounts.sort((x, y) => (order.get(x.account) ?? 0) - (order.get(y.account) ?? 0));
  return result;
}

export async function createFolderCall(ctx: ServiceContext, call: Call, account: string, name: string) {
  return audited(ctx, call, account, `create ${q(name)}`, async () => {
    const a = accountOf(ctx, account);
    const res = await ctx.pool.write(a, (c) => createFolder(c, name));
    return { account, name: res.name };
  });
}

export async function renameFolderCall(
  ctx: ServiceContext,
  call: Call,
  account: string,
  from: string,
  to: string,
) {
  return audited(ctx, call, account, `rename ${q(from)} to ${q(to)}`, async () => {
    const a = accountOf(ctx, account);
    const res = await ctx.pool.write(a, (c) => renameFolder(c, from, to));
    return { account, name: res.name };
  });
}

export async function deleteFolderCall(
  ctx: ServiceContext,
  call: Call,
  account: string,
  name: string,
  force: boolean,
) {
  return audited(ctx, call, account, `delete ${q(name)}${force ? " (force)" : ""}`, async () => {
    const a = accountOf(ctx, account);
    if (!a.policy.allow_delete_folder) {
      throw new MailError(
        "POLICY_DENIED",
        `the policy of account ${account} does not allow deleting folders`,
        `Only the user can allow it: set allow_delete_folder = true under [accounts.policy] for ${account} in config.toml, and confirm it with \`chainmail policy confirm\`.${pendingHint(ctx, account)}`,
      );
    }
    const res = await ctx.pool.write(a, (c) => deleteFolder(c, name, force));
    return { account, name: res.name, deleted: res.deleted };
  });
}
