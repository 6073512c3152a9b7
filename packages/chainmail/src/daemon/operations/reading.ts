/** Operations that read mail: search, messages, threads, attachments and raw messages. */
import { z } from "zod";
import type { ThreadResult } from "../../imap/thread.js";
import { SEARCH_LIMIT } from "../../limits.js";
import type { GetMessagesResult, SavedFile } from "../../service/reading.js";
import type { SearchResult } from "../../service/search/index.js";
import { operation } from "./define.js";
import {
  AccountsField,
  CursorField,
  DirField,
  GetRefsField,
  PartField,
  QueryField,
  RefField,
  SearchLimitField,
  SourceField,
} from "./fields.js";

const off = z.boolean().default(false);

export const readingOperations = {
  search: operation<SearchResult>()({
    params: z.object({
      query: QueryField.default(""),
      accounts: AccountsField.default([]),
      limit: SearchLimitField.default(SEARCH_LIMIT.default),
      cursor: CursorField.optional(),
      count_only: off,
      snippets: off,
      threads: off,
      source: SourceField.default("auto"),
    }),
    audit: "search",
    mutates: false,
  }),
  "messages.get": operation<GetMessagesResult>()({
    params: z.object({ refs: GetRefsField, full: off }),
    audit: "get",
    mutates: false,
  }),
  "thread.get": operation<ThreadResult & { source: "server" | "cache" | "mixed" }>()({
    params: z.object({ ref: RefField, full: off }),
    audit: "thread",
    mutates: false,
  }),
  "attachment.download": operation<SavedFile & { filename: string }>()({
    params: z.object({ ref: RefField, part: PartField, dir: DirField.optional() }),
    audit: "attachment",
    mutates: false,
  }),
  "raw.save": operation<SavedFile>()({
    params: z.object({ ref: RefField, dir: DirField.optional() }),
    audit: "get.raw",
    mutates: false,
  }),
};
