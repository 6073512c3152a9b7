import type { Embedder } from "../embed/types.js";
import { parseFeed } from "../importers/feed.js";
import { DexiError } from "./errors.js";
import { type ImportReport, importItems } from "./importing.js";
import type { NotesService } from "./notes.js";
import { readResponseText } from "../response-text.js";

export interface PollResult {
  url: string;
  title: string | null;
  report?: ImportReport;
  error?: string;
}

/** Subscribes a user to an RSS or Atom feed by its http(s) URL; `created` is false when already subscribed. */
export function subscribeFeed(notes: NotesService, userId: number, url: string, nowMs = Date.now()) {
  if (!/^https?:\/\//i.test(url))
    throw new DexiError("INVALID_ARGUMENT", `A feed URL starts with http:// or https://: ${url}`);
  return notes.store.records.addFeed(userId, url, nowMs);
}

export function listFeeds(notes: NotesService, userId: number) {
  return notes.store.records.feeds(userId);
}

/** The most of a feed document read (a large podcast feed is a few MB); a longer one is refused. */
export const MAX_FEED_BYTES = 10 * 1024 * 1024;

/** Fetches every feed of a user once and imports the articles not seen before. */
export async function pollFeeds(
  notes: NotesService,
  userId: number,
  options: { embedder?: Embedder; timeoutMs?: number; now?: () => number; restoreDeleted?: boolean } = {},
): Promise<PollResult[]> {
  const out: PollResult[] = [];
  for (const feed of await notes.store.records.feeds(userId)) {
    try {
      const res = await fetch(feed.url, {
        headers: {
          accept: "application/rss+xml, application/atom+xml, application/xml;q=0.9, */*;q=0.5",
          "user-agent": "dexi/0.1",
        },
        signal: AbortSignal.timeout(options.timeoutMs ?? 20_000),
      });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const text = await readResponseText(res, MAX_FEED_BYTES);
      if (text === undefined) throw new Error(`the feed is larger than ${MAX_FEED_BYTES} bytes`);
      const parsed = parseFeed(text, { feedId: feed.id });
      const report = await importItems(notes, userId, parsed.items, {
        ...(options.embedder ? { embedder: options.embedder } : {}),
        ...(options.now ? { now: options.now } : {}),
        ...(options.restoreDeleted ? { restoreDeleted: true } : {}),
      });
      await notes.store.records.markPolled(feed.id, parsed.title, (options.now ?? Date.now)());
      out.push({ url: feed.url, title: parsed.title, report });
    } catch (err) {
      out.push({ url: feed.url, title: feed.title, error: (err as Error).message });
    }
  }
  return out;
}
