/**
 * IMAP flags and keywords compare without regard to case (`\Seen` is `\SEEN`, `$Label1` is
 * `$label1`). Servers differ in how they keep them: Dovecot answers with one spelling per keyword,
 * others keep what each client sent. Every path that reads or changes flags (the server path, the
 * cache, set_flags) goes through here, so they agree whatever the server does.
 */
import type { ImapFlow } from "imapflow";

export type ShortFlag = "seen" | "flagged" | "answered" | "draft" | "deleted";

const SYSTEM: Record<string, ShortFlag> = {
  "\\seen": "seen",
  "\\flagged": "flagged",
  "\\answered": "answered",
  "\\draft": "draft",
  "\\deleted": "deleted",
};

/**
 * System flags by short name, in any case; keywords once each ignoring case (the first spelling
 * is kept); `\Recent` and other backslash flags, which are not keywords, are left out.
 */
export function classifyFlags(flags: Iterable<string> | undefined): {
  system: Set<ShortFlag>;
  keywords: string[];
} {
  const system = new Set<ShortFlag>();
  const keywords = new Map<string, string>();
  for (const f of flags ?? []) {
    const lower = f.toLowerCase();
    const sys = SYSTEM[lower];
    if (sys) system.add(sys);
    else if (!f.startsWith("\\") && !keywords.has(lower)) keywords.set(lower, f);
  }
  return { system, keywords: [...keywords.values()] };
}

/**
 * The spellings to send for keywords a caller names: to add, the spelling the folder already uses
 * when it has one in another case (so no second keyword appears on a server that keeps both); to
 * remove, every spelling the folder or its messages use. Backslash flags pass unchanged.
 */
export function keywordSpellings(
  wanted: string[],
  known: Iterable<string>,
  mode: "add" | "remove",
): string[] {
  const byLower = new Map<string, string[]>();
  for (const k of known) {
    if (k.startsWith("\\")) continue;
    const list = byLower.get(k.toLowerCase()) ?? [];
    if (!list.includes(k)) list.push(k);
    byLower.set(k.toLowerCase(), list);
  }
  const out = new Set<string>();
  for (const w of wanted) {
    const same = w.startsWith("\\") ? [] : (byLower.get(w.toLowerCase()) ?? []);
    if (mode === "remove") for (const s of [w, ...same]) out.add(s);
    else out.add(same[0] ?? w);
  }
  return [...out];
}

/**
 * The keyword spellings in the selected folder: its FLAGS list and the flags of the given messages
 * (FLAGS can lag behind keywords other clients created since the folder was selected).
 */
export async function knownKeywords(client: ImapFlow, uids: number[]): Promise<string[]> {
  const out = new Set<string>(client.mailbox ? client.mailbox.flags : []);
  for (const m of await client.fetchAll(uids, { uid: true, flags: true }, { uid: true }))
    for (const f of m.flags ?? []) out.add(f);
  return [...out];
}
