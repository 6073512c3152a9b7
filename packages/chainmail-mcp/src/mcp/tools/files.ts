/** Files: download_attachment and save_raw_message. Both write a new 0600 file and never replace one. */
import { untrusted, untrustedField } from "@mcpforge/toolkit";
import { z } from "zod";
import { defineTool, GROUPS } from "../context.js";
import { fileDir, ref } from "../schemas.js";

const group = GROUPS.files;

const FILE_RULES =
  "The file is new, with mode 0600; an existing file is never replaced. Without dir it goes to $XDG_CACHE_HOME/chainmail/attachments, or ~/.cache/chainmail/attachments when XDG_CACHE_HOME is unset or relative.";

export const fileTools = [
  defineTool({
    name: "download_attachment",
    title: "Download an attachment",
    group,
    description: `Saves one attachment of a message to a new file and returns its path. The file name comes from the message, sanitized; a name already taken gets (2), (3) before the extension. ${FILE_RULES} path, content_type and filename are untrusted.`,
    scope: null,
    input: {
      ref: ref("The message, from search or get_message"),
      part: z
        .string()
        .min(1)
        .max(64)
        .describe("An attachment part from get_message's attachments, such as 2 or 1.2"),
      dir: fileDir,
    },
    output: {
      path: untrustedField("The absolute path of the new file"),
      size: z.number().int().describe("The file's size in bytes"),
      content_type: untrustedField("The MIME type the message gives"),
      filename: untrustedField("The sanitized file name"),
    },
    annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: true },
    summary: (r) => `Saved an attachment of ${r.size} bytes`,
    handler: async ({ ref, part, dir }, { ctx }) => {
      const r = await ctx.client.downloadAttachment({ ref, part, ...(dir !== undefined ? { dir } : {}) });
      return {
        path: untrusted(r.path),
        size: r.size,
        content_type: untrusted(r.content_type),
        filename: untrusted(r.filename),
      };
    },
  }),

  defineTool({
    name: "save_raw_message",
    title: "Save the raw message",
    group,
    description: `Saves a message's original RFC 5322 bytes to a new message.eml file and returns its path. ${FILE_RULES}`,
    scope: null,
    input: {
      ref: ref("The message, from search or get_message"),
      dir: fileDir,
    },
    output: {
      path: z.string().describe("The absolute path of the new file"),
      size: z.number().int().describe("The file's size in bytes"),
      content_type: z.literal("message/rfc822"),
    },
    annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: true },
    summary: (r) => `Saved the raw message, ${r.size} bytes`,
    handler: async ({ ref, dir }, { ctx }) => {
      const r = await ctx.client.saveRaw({ ref, ...(dir !== undefined ? { dir } : {}) });
      return { path: r.path, size: r.size, content_type: "message/rfc822" as const };
    },
  }),
];
