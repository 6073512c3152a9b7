/** Files: download_attachment and save_raw_message. Both write a new 0600 file and never replace one. */
import { PartField } from "@mcpforge/chainmail";
import { hints, openWorld, toolFactory, untrusted, untrustedField } from "@mcpforge/toolkit";
import { z } from "zod";
import { type ChainmailContext, GROUPS, type GateState } from "../context.js";
import { fileDir, ref } from "../schemas.js";

const tool = toolFactory<ChainmailContext, GateState>({ group: GROUPS.files, scope: null });

const FILE_RULES =
  "The file is new, with mode 0600; an existing file is never replaced. Without dir it goes to $XDG_CACHE_HOME/chainmail/attachments, or ~/.cache/chainmail/attachments when XDG_CACHE_HOME is unset or relative.";

export const fileTools = [
  tool({
    name: "download_attachment",
    title: "Download an attachment",
    description: `Saves one attachment of a message to a new file and returns its path. The file name comes from the message, sanitized; a name already taken gets (2), (3) before the extension. ${FILE_RULES} path, content_type and filename are untrusted.`,
    input: {
      ref: ref("The message, from search or get_message"),
      part: PartField.describe("An attachment part from get_message's attachments, such as 2 or 1.2"),
      dir: fileDir,
    },
    output: {
      path: untrustedField("The absolute path of the new file"),
      size: z.number().int().describe("The file's size in bytes"),
      content_type: untrustedField("The MIME type the message gives"),
      filename: untrustedField("The sanitized file name"),
    },
    annotations: openWorld(hints.readOnly),
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

  tool({
    name: "save_raw_message",
    title: "Save the raw message",
    description: `Saves a message's original RFC 5322 bytes to a new message.eml file and returns its path. ${FILE_RULES}`,
    input: {
      ref: ref("The message, from search or get_message"),
      dir: fileDir,
    },
    output: {
      path: z.string().describe("The absolute path of the new file"),
      size: z.number().int().describe("The file's size in bytes"),
      content_type: z.literal("message/rfc822"),
    },
    annotations: openWorld(hints.readOnly),
    summary: (r) => `Saved the raw message, ${r.size} bytes`,
    handler: async ({ ref, dir }, { ctx }) => {
      const r = await ctx.client.saveRaw({ ref, ...(dir !== undefined ? { dir } : {}) });
      return { path: r.path, size: r.size, content_type: "message/rfc822" as const };
    },
  }),
];
