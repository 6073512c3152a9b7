/**
 * A search row read straight from the cache's columns (src/cache/row-shape.ts): only what the row
 * shows, so the stored recipients, attachments, labels and references are neither read nor parsed
 * for a search. The same row as the full CacheRow gave (test/search-cache-row.test.ts), field for
 * field and in the same key order, which the result's JSON keeps.
 */
import { FLAG_COLS, type RowShape } from "../../cache/row-shape.js";
import { encodeRef } from "../../refs.js";
import type { Hit } from "./types.js";

// The flags in the order the row lists them (sorted), with their columns' places in FLAG_COLS
const SORTED_FLAGS = [...FLAG_COLS].sort();

export const SEARCH_ROW: RowShape<Hit> = {
  columns: [
    "m.account",
    "f.path",
    "f.uidvalidity",
    "m.uid",
    "m.internal_date",
    "x.date",
    "x.from_json",
    "x.subject",
    ...SORTED_FLAGS.map((c) => `m.${c}`),
    "x.keywords_json",
    "m.size",
    "m.has_attachment",
    "x.message_id",
    "m.thread_key",
  ],
  make(v, facts) {
    // In the order of `columns`
    let i = 0;
    const next = <T>() => v[i++] as T;
    const account = next<string>();
    const folder = next<string>();
    const uidValidity = Number(next<string>());
    const uid = next<number>();
    const internalDate = next<number>();
    const date = next<number | null>();
    const from = (JSON.parse(next<string>()) as { name: string; address: string }[])[0];
    const subject = next<string>();
    const flags = SORTED_FLAGS.filter(() => next<number>() === 1);
    const keywords = (JSON.parse(next<string>()) as string[]).sort();
    const size = next<number>();
    const has_attachment = next<number>() === 1;
    const message_id = next<string | null>() ?? null;
    const thread_id = next<string>();
    return {
      ref: encodeRef({ account, folder, uidValidity, uid }),
      account,
      folder,
      date: new Date(date ?? internalDate).toISOString(),
      from: from ? { name: from.name, address: from.address } : null,
      subject,
      flags,
      keywords,
      size,
      has_attachment,
      message_id,
      // The cache stores the canonical key, so collapsing and the row's thread_id agree with the server path.
      thread_id,
      // No stored text (evicted, or beyond a settled cache's reach): addSnippets asks the server
      ...(typeof facts.snippet === "string" ? { snippet: facts.snippet } : {}),
      // (the arrival time as the CacheRow's `received` ISO string gave it back: whole milliseconds)
      sortDate: new Date(internalDate).getTime(),
      uid,
      path: folder,
    };
  },
};
