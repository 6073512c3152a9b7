/**
 * The batch tools: 1-500 refs from any accounts, each acted on in its own account, one outcome per
 * ref in the caller's order, one audit row per account. Only when every ref fails is the call an
 * error (with the first failure's reason).
 */
import type { ImapFlow } from "imapflow";
import type { AccountConfig } from "../config.js";
import { type WireError, MailError, toWireError } from "../errors.js";
import { mapImapError } from "../imap/connection.js";
import { keywordSpellings, knownKeywords } from "../imap/flags.js";
import { findByRole, findFolder } from "../imap/folders.js";
import { changeFlags, existing, expungeUids, type FolderBatch, transfer } from "../imap/organize.js";
import { MESSAGE_GONE_HINT } from "../imap/refusal.js";
import { KEYWORD_CHARS, MAX_BATCH, MAX_KEYWORD_LENGTH, MAX_LABEL_LENGTH } from "../limits.js";
import { decodeRef, encodeRef, type MessageRef } from "../refs.js";
import { type Call, type ServiceContext, audit, q } from "./context.js";
import { pendingHint } from "../policy/service.js";
import { roleFolder } from "../compose/mailbox.js";

export interface Outcome {
  ref: string;
  new_ref?: string;
  error?: WireError;
}

export interface BatchResult {
  outcomes: Outcome[];
  succeeded: number;
  failed: number;
}

/** What an operation does to one folder's present messages: each UID's new ref, or none. */
type GroupOp = (
  client: ImapFlow,
  batch: FolderBatch,
) => Promise<Map<number, string | MailError | undefined> | undefined>;

interface BatchSpec {
  describe: string;
  /** Throws to refuse every ref of the account (policy, provider). */
  precheck?: (account: AccountConfig) => void;
  /** Prepares the account's operation (e.g. resolves the destination folder) once per account. */
  prepare: (client: ImapFlow, account: AccountConfig) => Promise<GroupOp>;
}

function errorOf(err: unknown): WireError {
  return toWireError(err);
}

async function runBatch(
  ctx: ServiceContext,
  call: Call,
  refs: string[],
  spec: BatchSpec,
): Promise<BatchResult> {
  if (refs.length < 1 || refs.length > MAX_BATCH) {
    throw new MailError("INVALID_ARGUMENT", `refs must hold 1 to ${MAX_BATCH} refs`);
  }
  const outcomes: Outcome[] = refs.map((ref) => ({ ref }));
  const decoded: Array<MessageRef | undefined> = refs.map((ref, i) => {
    try {
      return decodeRef(ref);
    } catch (err) {
      outcomes[i]!.error = errorOf(err);
      return undefined;
    }
  });
  const byAccount = new Map<string, number[]>();
  decoded.forEach((r, i) => {
    if (r) byAccount.set(r.account, [...(byAccount.get(r.account) ?? []), i]);
  });
  for (const [name, indexes] of byAccount) {
    let denied = false;
    // Refs whose group the server finished: a later failure (a dropped connection) leaves them be.
    const settled = new Set<number>();
    const fail = (idx: number[], err: unknown) => {
      for (const i of idx) if (!settled.has(i)) outcomes[i]!.error = errorOf(err);
    };
    try {
      const account = ctx.config.accounts.find((a) => a.name === name);
      if (!account) throw new MailError("NOT_FOUND", `no account named ${JSON.stringify(name)}`);
      try {
        spec.precheck?.(account);
      } catch (err) {
        denied = (err as MailError).reason === "POLICY_DENIED";
        throw err;
      }
      await ctx.pool.write(account, async (client) => {
        const op = await spec.prepare(client, account);
        const groups = new Map<string, number[]>();
        for (const i of indexes) {
          const r = decoded[i]!;
          const key = `${r.folder}\u0000${r.uidValidity}`;
          groups.set(key, [...(groups.get(key) ?? []), i]);
        }
        for (const idx of groups.values()) {
          const first = decoded[idx[0]!]!;
          const uids = [...new Set(idx.map((i) => decoded[i]!.uid))];
          try {
            const batch: FolderBatch = {
              account: name,
              folder: first.folder,
              uidValidity: first.uidValidity,
              uids,
            };
            const { present, missing } = await existing(client, batch);
            const missingSet = new Set(missing);
            const gone = new MailError(
              "NOT_FOUND",
              "the message is no longer in its folder on the server",
              MESSAGE_GONE_HINT,
            );
            const gones = idx.filter((i) => missingSet.has(decoded[i]!.uid));
            fail(gones, gone);
            for (const i of gones) settled.add(i);
            if (present.length === 0) continue;
            const newRefs = await op(client, { ...batch, uids: present });
            for (const i of idx) {
              const r = decoded[i]!;
              if (missingSet.has(r.uid)) continue;
              const n = newRefs?.get(r.uid);
              if (n instanceof MailError) fail([i], n);
              else if (n) outcomes[i]!.new_ref = n;
              settled.add(i);
            }
          } catch (err) {
            fail(idx, mapImapError(err, name));
            for (const i of idx) settled.add(i);
            if (!client.usable) throw err;
          }
        }
      });
    } catch (err) {
      fail(indexes, err);
    }
    const failed = indexes.filter((i) => outcomes[i]!.error).length;
    const ok = indexes.length - failed;
    audit(
      ctx,
      call,
      name,
      denied ? "denied" : ok > 0 ? "allowed" : "error",
      `${spec.describe} ${indexes.length} ref(s): ${ok} ok, ${failed} failed`,
    );
  }
  const succeeded = outcomes.filter((o) => !o.error).length;
  const failed = outcomes.length - succeeded;
  if (succeeded === 0) {
    const first = outcomes.find((o) => o.error)!.error!;
    throw new MailError(first.reason, first.message, first.hint, first.detail);
  }
  return { outcomes, succeeded, failed };
}

/** The same ref for messages already where the operation would put them. */
function sameRefs(b: FolderBatch): Map<number, string> {
  return new Map(
    b.uids.map((uid) => [
      uid,
      encodeRef({ account: b.account, folder: b.folder, uidValidity: b.uidValidity, uid }),
    ]),
  );
}

function transferTo(destPath: string, mode: "move" | "copy"): GroupOp {
  return async (client, b) => {
    if (mode === "move" && b.folder === destPath) return sameRefs(b);
    return transfer(client, b, destPath, mode);
  };
}

async function destination(client: ImapFlow, folder: string): Promise<string> {
  const f = await findFolder(client, folder);
  if (!f)
    throw new MailError(
      "NOT_FOUND",
      "no folder of that name on this account; the name is in detail",
      "list_folders gives the folder names.",
      `folder: ${folder}`,
    );
  // A \Noselect folder only holds subfolders: the server would refuse the messages (Dovecot says
  // TRYCREATE, as if it did not exist), so say what the folder is before asking it.
  if (f.flags.has("\\Noselect") || f.flags.has("\\NonExistent"))
    throw new MailError(
      "INVALID_ARGUMENT",
      "the destination folder holds subfolders only, not messages; its name is in detail",
      "Pick one of its subfolders or another folder list_folders lists (it lists only folders that hold messages).",
      `folder: ${folder}`,
    );
  return f.path;
}

export function move(ctx: ServiceContext, call: Call, refs: string[], folder: string, mode: "move" | "copy") {
  return runBatch(ctx, call, refs, {
    describe: `${mode} to ${q(folder)}:`,
    prepare: async (client) => transferTo(await destination(client, folder), mode),
  });
}

export function archive(ctx: ServiceContext, call: Call, refs: string[]) {
  return runBatch(ctx, call, refs, {
    describe: "archive",
    prepare: async (client, account) => {
      if (account.provider === "google") {
        return async (c, b) => {
          await changeFlags(c, b, [], ["\\Inbox"], true);
          // Outside INBOX the message stays where it is; in INBOX it leaves the folder.
          return b.folder.toUpperCase() === "INBOX" ? undefined : sameRefs(b);
        };
      }
      const path = account.archive_folder
        ? await destination(client, account.archive_folder)
        : (await findByRole(client, "archive"))?.path;
      if (!path) {
        throw new MailError(
          "NOT_FOUND",
          `account ${account.name} has no archive folder`,
          "Set archive_folder for the account in config.toml.",
        );
      }
      return transferTo(path, "move");
    },
  });
}

export function trash(ctx: ServiceContext, call: Call, refs: string[]) {
  return runBatch(ctx, call, refs, {
    describe: "trash",
    prepare: async (client, account) => {
      // trash_folder first (servers without SPECIAL-USE), else the \\Trash folder: the same rule as
      // the draft tools' removal, so a message and a draft land in the same Trash.
      return transferTo(await roleFolder(client, account, "trash"), "move");
    },
  });
}

export function expunge(ctx: ServiceContext, call: Call, refs: string[]) {
  return runBatch(ctx, call, refs, {
    describe: "expunge",
    precheck: (account) => {
      if (!account.policy.allow_expunge) {
        throw new MailError(
          "POLICY_DENIED",
          `the policy of account ${account.name} does not allow expunge`,
          `Use trash instead. Only the user can allow expunge: set allow_expunge = true under [accounts.policy] for ${account.name} in config.toml, and confirm it with \`chainmail policy confirm\`.${pendingHint(ctx, account.name)}`,
        );
      }
    },
    prepare: async () => async (client, b) => {
      await expungeUids(client, b);
      return undefined;
    },
  });
}

const SYSTEM_FLAGS: Record<string, string> = {
  seen: "\\Seen",
  flagged: "\\Flagged",
  answered: "\\Answered",
  draft: "\\Draft",
};

export function toImapFlags(names: string[], what: string): string[] {
  return names.map((n, i) => {
    const sys = SYSTEM_FLAGS[n.toLowerCase()];
    if (sys) return sys;
    if (n.toLowerCase() === "deleted" || n.startsWith("\\")) {
      throw new MailError(
        "INVALID_ARGUMENT",
        `${what}[${i}] cannot be set here; the flag is in detail`,
        "Use seen, flagged, answered, draft or a keyword; use trash or expunge to delete.",
        `flag: ${n}`,
      );
    }
    if (n.length > MAX_KEYWORD_LENGTH || !KEYWORD_CHARS.test(n)) {
      throw new MailError(
        "INVALID_ARGUMENT",
        `${what}[${i}] is not a valid keyword (A-Z a-z 0-9 $ _ . -, at most ${MAX_KEYWORD_LENGTH} characters); it is in detail`,
        undefined,
        `keyword: ${n.slice(0, 200)}`,
      );
    }
    return n;
  });
}

export function setFlags(ctx: ServiceContext, call: Call, refs: string[], add: string[], remove: string[]) {
  const a = toImapFlags(add, "add");
  const r = toImapFlags(remove, "remove");
  if (a.length + r.length === 0)
    throw new MailError("INVALID_ARGUMENT", "add or remove must name at least one flag");
  return runBatch(ctx, call, refs, {
    describe: `flags +${a.length} -${r.length}:`,
    prepare: async () => async (client, b) => {
      // Keywords compare without case: send the spellings the folder uses (see imap/flags.ts).
      const needsKnown = [...a, ...r].some((f) => !f.startsWith("\\"));
      const known = needsKnown ? await knownKeywords(client, b.uids) : [];
      await changeFlags(
        client,
        b,
        keywordSpellings(a, known, "add"),
        keywordSpellings(r, known, "remove"),
        false,
      );
      return sameRefs(b);
    },
  });
}

const SYSTEM_LABELS = ["\\Inbox", "\\Important", "\\Starred", "\\Sent", "\\Draft"];

export function toLabels(names: string[], what: string): string[] {
  return names.map((n, i) => {
    if (n.startsWith("\\")) {
      const sys = SYSTEM_LABELS.find((s) => s.toLowerCase() === n.toLowerCase());
      if (!sys)
        throw new MailError(
          "INVALID_ARGUMENT",
          `${what}[${i}] starts with \\ but is not a system label (${SYSTEM_LABELS.join(", ")}); it is in detail`,
          undefined,
          `label: ${n}`,
        );
      return sys;
    }
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
    if (n.trim() === "" || n.length > MAX_LABEL_LENGTH || /[\x00-\x1f\x7f]/.test(n)) {
      throw new MailError("INVALID_ARGUMENT", `${what}[${i}] is not a valid label name`);
    }
    return n;
  });
}

export function setLabels(ctx: ServiceContext, call: Call, refs: string[], add: string[], remove: string[]) {
  const a = toLabels(add, "add");
  const r = toLabels(remove, "remove");
  if (a.length + r.length === 0)
    throw new MailError("INVALID_ARGUMENT", "add or remove must name at least one label");
  return runBatch(ctx, call, refs, {
    describe: `labels +${a.length} -${r.length}:`,
    precheck: (account) => {
      if (account.provider !== "google") {
        throw new MailError(
          "UNSUPPORTED",
          `account ${account.name} is not a Google account; labels exist only on Gmail`,
          "Use move or copy on this account.",
        );
      }
    },
    prepare: async (client) => {
      if (!client.capabilities.has("X-GM-EXT-1")) {
        throw new MailError("UNSUPPORTED", "the server does not speak X-GM-EXT-1 (Gmail labels)");
      }
      return async (c, b) => {
        await changeFlags(c, b, a, r, true);
        return sameRefs(b);
      };
    },
  });
}
