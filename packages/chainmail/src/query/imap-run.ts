import type { ImapFlow, SearchObject } from "imapflow";
import type { LeafNode, QueryNode } from "./ast.js";
import { type FolderInfo, evaluate, inMatchesFolder } from "./analyze.js";
import { compileToImap, imapUnsupported, leafSearch } from "./imap.js";
import { attachmentsFromStructure } from "./structure.js";

/** UIDs as an IMAP sequence set with ranges ("1:5,9"), so long lists stay short on the wire. */
export function uidSet(uids: number[]): string {
  const sorted = [...new Set(uids)].sort((a, b) => a - b);
  const out: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && (sorted[j + 1] as number) === (sorted[j] as number) + 1) j++;
    out.push(i === j ? `${sorted[i]}` : `${sorted[i]}:${sorted[j]}`);
    i = j + 1;
  }
  return out.join(",");
}

/** Splits UIDs into chunks whose sequence sets stay well under server line limits. */
function chunks(uids: number[], maxRanges = 1000): string[] {
  const ranges = uidSet(uids).split(",");
  const out: string[] = [];
  for (let i = 0; i < ranges.length; i += maxRanges) out.push(ranges.slice(i, i + maxRanges).join(","));
  return out;
}

async function uidSearch(client: ImapFlow, q: SearchObject): Promise<number[]> {
  const r = await client.search(q, { uid: true });
  return Array.isArray(r) ? r : [];
}

/**
 * Answers a query in one folder over plain IMAP and returns the matching UIDs, ascending.
 * Exact plans are one UID SEARCH. Otherwise the widened SEARCH yields candidates, whose
 * BODYSTRUCTURE decides has:attachment/filename:, while every other term is decided by its own
 * UID SEARCH limited to the candidates; the tree is then evaluated per candidate.
 * Takes the folder's mailbox lock itself (read-only select).
 */
export async function imapSearchFolder(
  client: ImapFlow,
  ast: QueryNode,
  scope: { folder: FolderInfo; account?: string; now: Date },
): Promise<number[]> {
  const plan = compileToImap(ast, scope.now, { folder: scope.folder, account: scope.account });
  if (!plan) return [];
  const reused = client.mailbox
    ? client.mailbox.path === scope.folder.path && client.mailbox.readOnly
    : false;
  const lock = await client.getMailboxLock(scope.folder.path, { readOnly: true });
  try {
    // The lock does not select a mailbox that is already selected, and the server answers SEARCH
    // from its view of the mailbox as of the last sync point, so another client's appends, flag
    // changes and expunges since the previous call would be missed: NOOP lets the server catch up.
    if (reused) await client.noop();
    const candidates = await uidSearch(client, plan.search);
    if (plan.exact || candidates.length === 0) return candidates.sort((a, b) => a - b);
    const structure = new Map<number, ReturnType<typeof attachmentsFromStructure>>();
    for await (const msg of client.fetch(
      uidSet(candidates),
      { uid: true, bodyStructure: true },
      { uid: true },
    )) {
      structure.set(msg.uid, attachmentsFromStructure(msg.bodyStructure));
    }
    const leafSets = new Map<LeafNode, Set<number>>();
    const collect = (n: QueryNode): void => {
      if (n.kind === "and" || n.kind === "or") n.children.forEach(collect);
      else if (n.kind === "not") collect(n.child);
      else if (n.kind !== "all" && n.kind !== "none" && !imapUnsupported(n)) leafSets.set(n, new Set());
    };
    collect(plan.bound);
    for (const [leaf, set] of leafSets) {
      const q = leafSearch(leaf, scope.now);
      if (q === "none") continue;
      for (const part of chunks(candidates))
        for (const uid of await uidSearch(client, { uid: part, ...q })) set.add(uid);
    }
    return candidates
      .filter((uid) =>
        evaluate(plan.bound, (leaf) => {
          switch (leaf.kind) {
            case "has_attachment":
              return (structure.get(uid)?.length ?? 0) > 0;
            case "filename": {
              const v = leaf.value.toLowerCase();
              return (structure.get(uid) ?? []).some((a) => (a.filename ?? "").toLowerCase().includes(v));
            }
            case "in":
              return inMatchesFolder(leaf.value, scope.folder);
            case "account":
              return scope.account !== undefined && leaf.value.toLowerCase() === scope.account.toLowerCase();
            default:
              return leafSets.get(leaf)?.has(uid) ?? false;
          }
        }),
      )
      .sort((a, b) => a - b);
  } finally {
    lock.release();
  }
}
