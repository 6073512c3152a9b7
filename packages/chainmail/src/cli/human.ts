/** The CLI's text output (without --json): one line per row for the lists, JSON for the rest. */
import { humanItems } from "./item-command.js";
import type { CacheStatus } from "../cache/index.js";

export function human(command: string, result: unknown): string {
  const r = result as Record<string, unknown>;
  switch (command) {
    case "accounts":
      return (r["accounts"] as Array<Record<string, unknown>>)
        .map(
          (a) =>
            `${a["name"]}\t${a["provider"]}\t${a["address"]}\tauth:${a["auth"]}\texpunge:${a["allow_expunge"]}\tdelete_folder:${a["allow_delete_folder"]}${a["confirmation_pending"] ? "\tconfirmation pending (chainmail policy status)" : ""}`,
        )
        .join("\n");
    case "search":
      return [
        ...(r["rows"] as Array<Record<string, unknown>>).map(
          (x) =>
            `${x["date"] ?? ""}\t${x["account"]}\t${x["folder"]}\t${(x["from"] as { address?: string } | null)?.address ?? ""}\t${x["subject"]}\t${x["ref"]}`,
        ),
        `${r["count"]} match(es)${r["next_cursor"] ? `; next: --cursor ${r["next_cursor"]}` : ""}`,
      ].join("\n");
    case "audit":
      return (r["rows"] as Array<Record<string, unknown>>)
        .map(
          (x) =>
            `${x["time"]}\t${x["client"]}\t${x["action"]}\t${x["account"] ?? "-"}\t${x["decision"]}\t${x["summary"]}`,
        )
        .join("\n");
    case "watch":
      if (Array.isArray(r["groups"]))
        return (r["groups"] as Array<Record<string, unknown>>)
          .map((x) => `${x["name"]}	acked ${x["acked"]}	pending ${x["pending"]}	updated ${x["updated"]}`)
          .join("\n");
      return JSON.stringify(result, null, 2);
    case "cache":
      if (typeof r["size_bytes"] === "number") return cacheStatus(result as CacheStatus);
      return JSON.stringify(result, null, 2);
    case "send-raw":
      return [
        `${r["status"]}\t${r["message_id"] ?? ""}\tkey ${r["idempotency_key"]}`,
        ...(r["draft_ref"] ? [`held in Drafts: ${r["draft_ref"]}`] : []),
        ...(Array.isArray(r["refused_recipients"]) ? [`refused: ${r["refused_recipients"].join(", ")}`] : []),
        ...(r["hint"] ? [String(r["hint"])] : []),
      ].join("\n");
    case "item":
      return humanItems(r);
    case "policy":
      return humanPolicy(r);
    default:
      return JSON.stringify(result, null, 2);
  }
}

function cacheStatus(status: CacheStatus): string {
  return [
    ...status.accounts.flatMap((a) => [
      `${a.account}\t${a.state}\tlast sync ${a.last_sync ?? "never"}\tdownloaded today ${a.download_today.bytes} of ${a.download_today.budget_bytes} bytes`,
      ...a.folders.map(
        (f) =>
          `  ${f.name}\theaders ${f.headers_cached}/${f.messages}\tbodies ${Math.round(f.body_coverage * 100)}%\t${f.complete ? "complete" : "incomplete"}\t${f.watching ? "watching, " : ""}${f.fresh ? "fresh" : "stale"}${f.error ? `\terror: ${f.error}` : ""}${f.watch_error ? `\twatch error: ${f.watch_error}` : ""}`,
      ),
    ]),
    `cache ${status.size_bytes} of ${status.max_size_bytes} bytes`,
  ].join("\n");
}

function humanPolicy(r: Record<string, unknown>): string {
  if (Array.isArray(r["confirmed"]))
    return (
      (r["confirmed"] as Array<{ account: string; changes: string[] }>)
        .map((c) => `${c.account}\tconfirmed: ${c.changes.join("; ")}`)
        .join("\n") || "no widening was pending"
    );
  return (r["accounts"] as Array<{ account: string; pending: boolean; changes: string[]; digest: string }>)
    .map((a) =>
      a.pending
        ? `${a.account}\tpending (digest ${a.digest}): ${a.changes.join("; ")}`
        : `${a.account}\tconfirmed, nothing pending`,
    )
    .join("\n");
}
