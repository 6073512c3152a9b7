/**
 * The CLI's text output (without --json): one line per row for the lists, readable text for the
 * rest. This file picks the renderer per command and filters what reaches the terminal; the
 * renderers are mail.ts, admin.ts (the daemon's own state) and items.ts, over format.ts.
 */
import type { CacheStatus } from "../../cache/index.js";
import type { ComposeResult } from "../../compose/result.js";
import type { AccountSyncReport } from "../../daemon/cache-runner.js";
import type { RebuildReport } from "../../daemon/operations/cache.js";
import type { Message } from "../../imap/messages.js";
import type { CheckResult } from "../../imap/test-account.js";
import type { ThreadResult } from "../../imap/thread-plan.js";
import type { AdminStatus } from "../../service/admin.js";
import type { ConfigError } from "../../service/context.js";
import type { WatchStatus } from "../../service/events.js";
import type { BatchResult } from "../../service/organize.js";
import type { SearchResult } from "../../service/search/index.js";
import type { AuditRow } from "../../store/state.js";
import { noAccountsLine, noConfigText } from "../first-run.js";
import {
  adminStatus,
  cacheStatus,
  humanAudit,
  humanOutbox,
  humanPolicy,
  humanSync,
  humanTest,
  humanWatch,
  humanWatchStatus,
  withConfigError,
} from "./admin.js";
import { fields, type WireLike } from "./format.js";
import { humanItems } from "./items.js";
import {
  humanBatch,
  humanChange,
  humanCompose,
  humanFolders,
  humanMessages,
  humanSaved,
  humanSearch,
  humanThread,
} from "./mail.js";

export { columns, displayWidth, fields, when } from "./format.js";
export { humanItems } from "./items.js";

export interface HumanContext {
  /** The config file, named when there are no accounts yet. */
  configFile: string;
  /** Whether that file exists. */
  configExists: boolean;
  /** The sub-command, for results that do not say which one they answer (item delete|restore). */
  sub?: string;
}

/**
 * The text of a result for a terminal. Mail text (subjects, bodies, names, server replies) is
 * printed as it is, less what a terminal would act on (terminalText).
 */
export function human(command: string, result: unknown, context?: HumanContext): string {
  return terminalText(render(command, result, context));
}

/**
 * Outside text made safe for a terminal: control characters (escape sequences that move the
 * cursor, retitle the window or hide text) and invisible format characters (bidi overrides and
 * marks, zero-width characters) are removed; tabs and newlines stay. The one filter of the CLI's
 * output: results (human), the watch stream and an error's detail (the bin) all pass through it.
 */
export function terminalText(text: string): string {
  return text.replace(TERMINAL_UNSAFE, "");
}

const TERMINAL_UNSAFE = /[^\P{Cc}\t\n]|\p{Cf}/gu;

function render(command: string, result: unknown, context?: HumanContext): string {
  const text = renderResult(command, result, context);
  if (!context || !answeredForNoAccount(command, result)) return text;
  return [text, noAccountsLine(context.configFile)].filter(Boolean).join("\n");
}

/**
 * Whether a listing across accounts (folders, search, cache status) came back empty because there
 * is no account to ask: no account in its answer, none failed.
 */
function answeredForNoAccount(command: string, result: unknown): boolean {
  const r = result as Record<string, unknown>;
  const none = (key: string) => Array.isArray(r[key]) && (r[key] as unknown[]).length === 0;
  const noneFailed = r["partial"] === undefined || none("partial");
  if (command === "folders") return none("accounts") && noneFailed;
  if (command === "search") return none("account_counts") && noneFailed;
  if (command === "cache") return typeof r["size_bytes"] === "number" && none("accounts");
  return false;
}

function renderResult(command: string, result: unknown, context?: HumanContext): string {
  const r = result as Record<string, unknown>;
  switch (command) {
    case "accounts": {
      const accounts = r["accounts"] as Array<Record<string, unknown>>;
      const lines = accounts.map(
        (a) =>
          `${a["name"]}\t${a["provider"]}\t${a["address"]}\tauth:${a["auth"]}\texpunge:${a["allow_expunge"]}\tdelete_folder:${a["allow_delete_folder"]}${a["confirmation_pending"] ? "\tconfirmation pending (chainmail policy status)" : ""}`,
      );
      if (accounts.length === 0 && context)
        lines.push(
          context.configExists
            ? `No accounts in ${context.configFile}. Add one with \`chainmail accounts add you@example.com\` (or as an [[accounts]] table, see chainmail's README), then store its password with \`chainmail secret set NAME\`.`
            : noConfigText(context.configFile),
        );
      return withConfigError(lines, r["config_error"] as ConfigError | undefined);
    }
    case "test":
      return humanTest(r as unknown as { account: string; imap: CheckResult; smtp: CheckResult });
    case "folders":
      if (Array.isArray(r["accounts"])) return humanFolders(r);
      return humanChange(r);
    case "get":
      return humanMessages(r as { messages: Message[]; errors: Array<{ ref: string; error: WireLike }> });
    case "thread":
      return humanThread(r as unknown as ThreadResult);
    case "send":
    case "reply":
    case "forward":
      return humanCompose(result as ComposeResult);
    case "draft":
      if (typeof r["status"] === "string") return humanCompose(result as ComposeResult);
      return humanChange(r);
    case "search":
      return humanSearch(result as SearchResult);
    case "audit":
      return humanAudit(r["rows"] as AuditRow[]);
    case "watch":
      if (typeof r["last_id"] === "number") return humanWatchStatus(result as WatchStatus);
      return humanWatch(r);
    case "outbox":
      return humanOutbox(r);
    case "move":
    case "copy":
    case "archive":
    case "trash":
    case "expunge":
    case "flags":
    case "labels":
      return humanBatch(command, result as BatchResult);
    case "attachment":
    case "raw":
      return humanSaved(r);
    case "cache":
      if (typeof r["size_bytes"] === "number") return cacheStatus(result as CacheStatus);
      if (Array.isArray(r["accounts"]) && r["accounts"].every((a: Record<string, unknown>) => a["dropped"]))
        return (r["accounts"] as RebuildReport[])
          .map(
            (a) =>
              `${a.account}\tdropped ${a.dropped.messages} message(s), ${a.dropped.bodies} bodies\t${a.sync.ok ? `synced ${a.sync.folders} folder(s), ${a.sync.added} message(s), ${a.sync.bodies} bodies` : `sync failed: ${a.sync.error?.reason}: ${a.sync.error?.message}`}`,
          )
          .join("\n");
      if (typeof r["bodies"] === "number" && typeof r["bytes"] === "number")
        return `evicted ${r["bodies"]} bodies, ${r["bytes"]} bytes${r["account"] ? ` of ${r["account"]}` : ""}`;
      return humanSync(r["accounts"] as AccountSyncReport[]);
    case "send-raw":
      return [
        `${r["status"]}\t${r["message_id"] ?? ""}\tkey ${r["idempotency_key"]}`,
        ...(r["draft_ref"] ? [`held in Drafts: ${r["draft_ref"]}`] : []),
        ...(Array.isArray(r["refused_recipients"]) ? [`refused: ${r["refused_recipients"].join(", ")}`] : []),
        ...(r["hint"] ? [String(r["hint"])] : []),
      ].join("\n");
    case "item":
      if (Array.isArray(r["ids"]) && context?.sub)
        return `${context.sub === "restore" ? "restored" : "deleted"}: ${(r["ids"] as string[]).join(", ")}\nrevision ${r["revision"]}`;
      return humanItems(r);
    case "admin":
      return adminStatus(result as AdminStatus);
    case "policy":
      return withConfigError([humanPolicy(r)], r["config_error"] as ConfigError | undefined);
    default:
      return fields(
        Object.entries(r).map(([k, v]) => [k, typeof v === "object" && v !== null ? JSON.stringify(v) : v]),
      );
  }
}
