/**
 * `chainmail watch`: streams events, one line each (JSON with --json), by long-polling watch.read
 * with a group or a cursor until interrupted; `watch status`, `watch groups`, `watch groups delete`.
 */
import type { DaemonClient } from "../client/index.js";
import { EVENT_KINDS, type EventKind, WAIT_SECONDS } from "../events/limits.js";
import type { MailEvent } from "../events/log.js";
import type { DaemonCommand, Request, Values } from "./command-kit.js";

const options = {
  account: { type: "string", multiple: true },
  group: { type: "string" },
  cursor: { type: "string" },
  in: { type: "string" },
  kind: { type: "string", multiple: true },
  item: { type: "string" },
  wait: { type: "string" },
  once: { type: "boolean" },
} as const;

export const WATCH_USAGE =
  "usage: chainmail watch [--group G | --cursor N] [--account A]... [--in FOLDER] [--kind K]... [--item ID] [--wait S] [--once] | watch status | watch groups | watch groups delete GROUP";

/** One event as a line of text: position, time, kind, account, folder, then what it says. */
export function eventLine(e: MailEvent): string {
  const detail =
    e.kind === "new" || e.kind === "item_mail"
      ? `${e.row?.from?.address ?? ""}\t${oneLine(e.row?.subject ?? "")}\t${e.ref ?? ""}`
      : e.kind === "flags"
        ? `${[...(e.flags ?? []), ...(e.keywords ?? [])].join(",")}\t${e.ref ?? ""}`
        : e.kind === "expunged"
          ? (e.ref ?? "")
          : e.kind === "status"
            ? `${e.state ?? ""}${e.error ? ` ${e.error}` : ""}`
            : e.kind === "gap"
              ? (e.reason ?? "")
              : (e.change ?? "");
  const who = e.item_id ? `\t${e.item_id}` : "";
  return `${e.id}\t${e.time}\t${e.kind}\t${e.account ?? "-"}\t${e.folder ?? ""}${who}\t${detail}`;
}

/** A subject's tabs and line breaks would split the event over columns or lines. */
const oneLine = (s: string) => s.replace(/[\t\r\n]+/g, " ");

function whole(v: string | undefined, name: string, fail: (m: string) => never): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) fail(`--${name} must be a whole number`);
  return Number(v);
}

export function watchCommand(fail: (message: string) => never): DaemonCommand {
  const cmd: DaemonCommand<typeof options> = {
    options,
    request: (o: Values<typeof options>, args: string[]): Request => {
      if (args[0] === "status" && args.length === 1) return { send: (c) => c.watchStatus() };
      if (args[0] === "groups" && args.length === 1) return { send: (c) => c.watchGroups() };
      if (args[0] === "groups" && args[1] === "delete" && args.length === 3)
        return { send: (c) => c.deleteWatchGroup({ group: args[2]! }) };
      if (args.length > 0) fail(WATCH_USAGE);
      for (const k of o.kind ?? [])
        if (!(EVENT_KINDS as readonly string[]).includes(k))
          fail(`--kind must be one of ${EVENT_KINDS.join(", ")}`);
      if (o.group !== undefined && o.cursor !== undefined)
        fail("--group and --cursor cannot be used together");
      const wait = whole(o.wait, "wait", fail) ?? WAIT_SECONDS.max;
      const start = whole(o.cursor, "cursor", fail);
      const base = {
        accounts: o.account ?? [],
        ...(o.in !== undefined ? { in: o.in } : {}),
        ...(o.item !== undefined ? { item: o.item } : {}),
        kinds: (o.kind ?? []) as EventKind[],
        wait_seconds: wait,
      };
      const stream = async (client: DaemonClient, out: (e: MailEvent) => void, stopped: () => boolean) => {
        // Without a group or a cursor the stream starts at the log's end: what happens from now on.
        let cursor = o.group === undefined ? (start ?? (await client.watchStatus()).last_id) : undefined;
        while (!stopped()) {
          const r = await client.readEvents({
            ...base,
            ...(o.group !== undefined ? { group: o.group } : { cursor: cursor ?? 0 }),
          });
          for (const e of r.events) out(e);
          cursor = r.next_cursor;
          if (o.once) return;
        }
      };
      return { send: () => Promise.resolve(undefined), stream };
    },
  };
  return cmd as unknown as DaemonCommand;
}
