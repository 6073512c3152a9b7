/**
 * The CLI's daemon commands: each names its own flags (node:util parseArgs options) and builds one
 * daemon request from them, typed by the operation table (src/daemon/operations).
 */
import { command, type DaemonCommand, need, request, usage, whole } from "./command-kit.js";
import { ACCOUNTS_USAGE, accountsOptions } from "./accounts.js";
import { COMPOSE_COMMANDS } from "./compose-commands.js";
import { SEARCH_SOURCES, type SearchSource } from "../limits.js";
import { itemCommand } from "./item-command.js";

export { type DaemonCommand, type Request, usage, type Values } from "./command-kit.js";
import { watchCommand } from "./watch.js";

const or = (words: readonly string[]) => `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;

const accounts = { account: { type: "string", multiple: true } } as const;
const flagEdits = {
  add: { type: "string", multiple: true },
  remove: { type: "string", multiple: true },
} as const;
const full = { full: { type: "boolean" } } as const;
const dir = { dir: { type: "string" } } as const;

const batch = (method: "archive" | "trash" | "expunge") =>
  command({
    options: {},
    request: (_o, args) => {
      need(args, 1, "REF...", method);
      return request(method, { refs: args });
    },
  });

const transfer = (method: "move" | "copy") =>
  command({
    options: {},
    request: (_o, args) => {
      need(args, 2, "FOLDER REF...", method);
      return request(method, { folder: args[0]!, refs: args.slice(1) });
    },
  });

export const COMMANDS: Record<string, DaemonCommand> = {
  ...COMPOSE_COMMANDS,
  accounts: command({
    // probe runs in the CLI process (./accounts.ts); its flags are here so that parseArgs knows them.
    options: accountsOptions,
    request: (o, args) => {
      // The flags of probe and add (the global ones, such as --json, are in `o` too).
      const localFlags = Object.keys(accountsOptions).some(
        (k) => (o as Record<string, unknown>)[k] !== undefined,
      );
      if (!localFlags && (args.length === 0 || (args[0] === "list" && args.length === 1)))
        return request("accounts.list", {});
      usage(ACCOUNTS_USAGE);
    },
  }),
  test: command({
    options: {},
    request: (_o, args) => {
      need(args, 1, "ACCOUNT", "test");
      return request("account.test", { account: args[0]! });
    },
  }),
  folders: command({
    options: { ...accounts, force: { type: "boolean" } },
    request: (o, args) => {
      const sub = args[0] ?? "list";
      if (sub === "list") return request("folders.list", { accounts: o.account ?? [] });
      if (sub === "create" && args.length === 3)
        return request("folders.create", { account: args[1]!, name: args[2]! });
      if (sub === "rename" && args.length === 4)
        return request("folders.rename", { account: args[1]!, from: args[2]!, to: args[3]! });
      if (sub === "delete" && args.length === 3)
        return request("folders.delete", { account: args[1]!, name: args[2]!, force: o.force ?? false });
      usage("usage: chainmail folders [list|create ACCOUNT NAME|rename ACCOUNT FROM TO|delete ACCOUNT NAME]");
    },
  }),
  search: command({
    options: {
      ...accounts,
      limit: { type: "string" },
      cursor: { type: "string" },
      count: { type: "boolean" },
      snippets: { type: "boolean" },
      threads: { type: "boolean" },
      source: { type: "string" },
    },
    request: (o, args) => {
      const source = o.source ?? "auto";
      if (!(SEARCH_SOURCES as readonly string[]).includes(source))
        usage(`--source must be ${or(SEARCH_SOURCES)}`);
      const limit = whole(o.limit, "limit");
      return request("search", {
        query: args.join(" "),
        accounts: o.account ?? [],
        ...(limit !== undefined ? { limit } : {}),
        ...(o.cursor ? { cursor: o.cursor } : {}),
        count_only: o.count ?? false,
        snippets: o.snippets ?? false,
        threads: o.threads ?? false,
        source: source as SearchSource,
      });
    },
  }),
  get: command({
    options: full,
    request: (o, args) => {
      need(args, 1, "REF...", "get");
      return request("messages.get", { refs: args, full: o.full ?? false });
    },
  }),
  thread: command({
    options: full,
    request: (o, args) => {
      need(args, 1, "REF", "thread");
      return request("thread.get", { ref: args[0]!, full: o.full ?? false });
    },
  }),
  attachment: command({
    options: dir,
    request: (o, args) => {
      need(args, 2, "REF PART", "attachment");
      return request("attachment.download", {
        ref: args[0]!,
        part: args[1]!,
        ...(o.dir ? { dir: o.dir } : {}),
      });
    },
  }),
  raw: command({
    options: dir,
    request: (o, args) => {
      need(args, 1, "REF", "raw");
      return request("raw.save", { ref: args[0]!, ...(o.dir ? { dir: o.dir } : {}) });
    },
  }),
  move: transfer("move"),
  copy: transfer("copy"),
  archive: batch("archive"),
  trash: batch("trash"),
  expunge: batch("expunge"),
  flags: command({
    options: flagEdits,
    request: (o, args) => {
      need(args, 1, "REF...", "flags");
      return request("flags", { refs: args, add: o.add ?? [], remove: o.remove ?? [] });
    },
  }),
  labels: command({
    options: flagEdits,
    request: (o, args) => {
      need(args, 1, "REF...", "labels");
      return request("labels", { refs: args, add: o.add ?? [], remove: o.remove ?? [] });
    },
  }),
  cache: command({
    options: { ...accounts, before: { type: "string" }, bytes: { type: "string" } },
    request: (o, args) => {
      const sub = args.length === 1 ? args[0] : undefined;
      if ((o.before !== undefined || o.bytes !== undefined) && sub !== "evict")
        usage("--before and --bytes are flags of chainmail cache evict");
      if (sub === "status") return request("cache.status", { accounts: o.account ?? [] });
      if (sub === "sync") return request("cache.sync", { accounts: o.account ?? [] });
      if (sub === "rebuild") return request("cache.rebuild", { accounts: o.account ?? [] });
      if (sub === "evict") {
        if ((o.account?.length ?? 0) > 1)
          usage("chainmail cache evict takes one --account (or none: every account)");
        const bytes = whole(o.bytes, "bytes");
        return request("cache.evict", {
          ...(o.account?.[0] ? { account: o.account[0] } : {}),
          ...(o.before !== undefined ? { before: o.before } : {}),
          ...(bytes !== undefined ? { bytes } : {}),
        });
      }
      usage(
        "usage: chainmail cache status|sync|rebuild [--account A]... | cache evict [--account A] [--before DATE] [--bytes N]",
      );
    },
  }),
  watch: watchCommand(usage),
  admin: command({
    options: {},
    request: (_o, args) => {
      if (args.length === 1 && args[0] === "status") return request("admin.status", {});
      usage("usage: chainmail admin status");
    },
  }),
  audit: command({
    options: { action: { type: "string" }, since: { type: "string" }, limit: { type: "string" } },
    request: (o) => {
      const limit = whole(o.limit, "limit");
      return request("audit.read", {
        ...(o.action ? { action: o.action } : {}),
        ...(o.since ? { since: o.since } : {}),
        ...(limit !== undefined ? { limit } : {}),
      });
    },
  }),
  item: itemCommand,
};
