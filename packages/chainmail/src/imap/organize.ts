/** Changing messages in one folder of one account: move, copy, expunge, flags and Gmail labels. */
import type { ImapFlow } from "imapflow";
import { encodeRef } from "../refs.js";
import { select } from "./messages.js";

export interface FolderBatch {
  account: string;
  folder: string;
  uidValidity: number;
  uids: number[];
}

/** Selects the folder and splits the UIDs into those that exist and those that do not. */
export async function existing(
  client: ImapFlow,
  b: FolderBatch,
): Promise<{ present: number[]; missing: number[] }> {
  await select(client, b.account, b.folder, b.uidValidity);
  const found = new Set((await client.search({ uid: b.uids.join(",") }, { uid: true })) || []);
  return { present: b.uids.filter((u) => found.has(u)), missing: b.uids.filter((u) => !found.has(u)) };
}

/** Moves or copies; returns each source UID's new ref (undefined when the server did not report it). */
export async function transfer(
  client: ImapFlow,
  b: FolderBatch,
  destPath: string,
  mode: "move" | "copy",
): Promise<Map<number, string | undefined>> {
  const res =
    mode === "move"
      ? await client.messageMove(b.uids, destPath, { uid: true })
      : await client.messageCopy(b.uids, destPath, { uid: true });
  const out = new Map<number, string | undefined>();
  const uv = res && res.uidValidity !== undefined ? Number(res.uidValidity) : undefined;
  for (const uid of b.uids) {
    const n = res ? res.uidMap?.get(uid) : undefined;
    out.set(
      uid,
      n !== undefined && uv
        ? encodeRef({ account: b.account, folder: destPath, uidValidity: uv, uid: n })
        : undefined,
    );
  }
  return out;
}

export async function expungeUids(client: ImapFlow, b: FolderBatch): Promise<void> {
  // imapflow uses UID EXPUNGE with UIDPLUS, so other \Deleted messages in the folder are left alone.
  await client.messageDelete(b.uids, { uid: true });
}

export async function changeFlags(
  client: ImapFlow,
  b: FolderBatch,
  add: string[],
  remove: string[],
  labels: boolean,
): Promise<void> {
  const opts = { uid: true, ...(labels ? { useLabels: true } : {}) };
  if (add.length) await client.messageFlagsAdd(b.uids, add, opts);
  if (remove.length) await client.messageFlagsRemove(b.uids, remove, opts);
}
