/**
 * Uploads: a file handed to the daemon in chunks before a compose call names it as `upload:ID` in
 * attachments or an inline image's path. Only upload.finish writes an audit row (action `upload`);
 * a refused begin writes one too (src/service/uploads.ts).
 */
import { z } from "zod";
import { MAX_ATTACHMENT_TOTAL, MAX_UPLOAD_CHUNK_TEXT } from "../../limits.js";
import { FilePathField } from "./compose.js";
import { operation } from "./define.js";
import { UploadIdField } from "./fields.js";

export { UploadIdField };

export const uploadOperations = {
  "upload.begin": operation<{ upload_id: string; chunk_bytes: number }>()({
    params: z.object({ path: FilePathField, size: z.number().int().min(0).max(MAX_ATTACHMENT_TOTAL) }),
    audit: null,
    mutates: false,
  }),
  "upload.chunk": operation<{ upload_id: string; received: number }>()({
    params: z.object({
      upload_id: UploadIdField,
      index: z.number().int().min(0),
      data: z.string().max(MAX_UPLOAD_CHUNK_TEXT),
    }),
    audit: null,
    mutates: false,
  }),
  "upload.finish": operation<{ upload_id: string; size: number; sha256: string }>()({
    params: z.object({ upload_id: UploadIdField }),
    audit: "upload",
    mutates: false,
  }),
};
