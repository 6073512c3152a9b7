/**
 * The text of mail results: folders, messages and threads, search rows, sends and drafts, batch
 * changes, saved files.
 */
import type { ComposeResult } from "../../compose/result.js";
import type { Message } from "../../imap/messages.js";
import type { ThreadResult } from "../../imap/thread-plan.js";
import type { BatchResult } from "../../service/organize.js";
import type { SearchResult } from "../../service/search/index.js";
import { cell, columns, errorLine, fields, type WireLike, when } from "./format.js";

export function humanFolders(r: Record<string, unknown>): string {
  const accounts = r["accounts"] as Array<{
    account: string;
    folders: Array<{ name: string; role: string | null; messages: number | null; unseen: number | null }>;
  }>;
  const partial = (r["partial"] ?? []) as Array<{ account: string; folder?: string; error: WireLike }>;
  return [
    ...accounts.flatMap((a) =>
      a.folders.map(
        (f) =>
          `${a.account}\t${f.name}\t${f.role ?? "-"}\t${f.messages ?? "?"} message(s)\t${f.unseen ?? "?"} unseen`,
      ),
    ),
    ...partial.map((p) => `${p.account}${p.folder ? `\t${p.folder}` : ""}\terror: ${errorLine(p.error)}`),
  ].join("\n");
}

/** A folder or draft change: its fields as `key: value`. */
export function humanChange(r: Record<string, unknown>): string {
  return Object.entries(r)
    .map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join("\n");
}

const addresses = (list: Array<{ name?: string; address?: string }>) =>
  list.map((a) => (a.name ? `${a.name} <${a.address}>` : (a.address ?? ""))).join(", ");

export function humanMessage(m: Message): string {
  return [
    `ref: ${m.ref}`,
    `account: ${m.account}\tfolder: ${m.folder}`,
    `date: ${when(m.date)}`,
    `from: ${addresses(m.from)}`,
    `to: ${addresses(m.to)}`,
    ...(m.cc.length ? [`cc: ${addresses(m.cc)}`] : []),
    `subject: ${m.subject}`,
    ...(m.flags.length || m.keywords.length ? [`flags: ${[...m.flags, ...m.keywords].join(" ")}`] : []),
    ...m.attachments.map((a) => `attachment ${a.part}: ${a.filename} (${a.content_type}, ${a.size} bytes)`),
    "",
    m.body,
    ...(m.body_truncated ? ["[body cut; --full gives all of it]"] : []),
  ].join("\n");
}

const RULE = "\n----------------------------------------\n";

export function humanMessages(r: {
  messages: Message[];
  errors: Array<{ ref: string; error: WireLike }>;
}): string {
  return [
    ...r.messages.map(humanMessage),
    ...r.errors.map((e) => `ref ${e.ref}: error: ${errorLine(e.error)}`),
  ].join(RULE);
}

export function humanThread(r: ThreadResult): string {
  return [
    `thread ${r.thread_id}: ${r.messages.length} message(s)${r.truncated ? `, ${r.omitted_refs.length} more not shown (get them by ref: ${r.omitted_refs.join(" ")})` : ""}${r.errors.length ? `, ${r.errors.length} could not be read` : ""}${r.partial.length ? `, ${r.partial.length} folder(s) not searched` : ""}`,
    ...r.messages.map(humanMessage),
    ...r.errors.map((e) => `ref ${e.ref}: error: ${errorLine(e.error)}`),
    ...r.partial.map((p) => `folder ${p.folder}: not searched: ${errorLine(p.error)}`),
  ].join(RULE);
}

export function humanCompose(r: ComposeResult): string {
  const lines = [`status: ${r.status}`];
  const add = (k: string, v: unknown) => {
    if (v !== undefined && v !== "" && !(Array.isArray(v) && v.length === 0))
      lines.push(`${k}: ${Array.isArray(v) ? v.join(", ") : String(v)}`);
  };
  add("message_id", r.message_id);
  add("sent_ref", r.sent_ref);
  add("draft_ref", r.draft_ref);
  add("idempotency_key", r.idempotency_key);
  add("original_status", r.original_status);
  add("refused_recipients", r.refused_recipients);
  add("sent_copy_error", r.sent_copy_error);
  add("blocked", r.blocked);
  if (r.too_many_recipients) add("too_many_recipients", "true");
  add("hint", r.hint);
  return lines.join("\n");
}

export function humanSearch(r: SearchResult): string {
  const table = r.rows.length
    ? columns(
        ["DATE", "ACCOUNT", "FOLDER", "FROM", "REF", "SUBJECT"],
        r.rows.map((x) => [when(x.date), x.account, x.folder, x.from?.address, x.ref, x.subject]),
      ).split("\n")
    : [];
  // A snippet goes under its row (--snippets), indented, so the columns stay aligned.
  const lines = table.flatMap((line, i) => {
    const snippet = i > 0 ? r.rows[i - 1]!.snippet : undefined;
    return snippet ? [line, `    ${cell(snippet)}`] : [line];
  });
  return [
    ...lines,
    `${r.count} match(es)${r.next_cursor ? `; next page: --cursor ${r.next_cursor}` : ""}`,
    ...r.partial.map(
      (p) => `not searched: ${p.account}${p.folder ? ` ${p.folder}` : ""}: ${errorLine(p.error)}`,
    ),
  ].join("\n");
}

export function humanBatch(command: string, r: BatchResult): string {
  const rows = r.outcomes.map((o) => [
    o.ref,
    o.error ? "failed" : "ok",
    o.error ? errorLine(o.error) : o.new_ref ? `now ${o.new_ref}` : "",
  ]);
  return [
    columns(["REF", "OUTCOME", "DETAIL"], rows),
    `${command}: ${r.succeeded} done, ${r.failed} failed`,
  ].join("\n");
}

export function humanSaved(r: Record<string, unknown>): string {
  return fields([
    ["saved", r["path"]],
    ["size", `${r["size"]} bytes`],
    ["type", r["content_type"]],
    ["filename", r["filename"]],
  ]);
}
