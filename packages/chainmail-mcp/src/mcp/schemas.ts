/**
 * Input and output pieces the tools share. Inputs are the daemon's own parameter schemas (so a bad
 * value is refused here with a clear INVALID_ARGUMENT, with the bounds the daemon checks); outputs
 * wrap every piece of text that came from a message or a mail server as untrusted, and never a ref.
 */
import {
  AccountField,
  AccountsField,
  BatchRefsField,
  DirField,
  FolderField,
  MAX_BATCH,
  RefField,
} from "@mcpforge/chainmail";
import { Untrusted, untrustedField } from "@mcpforge/toolkit";
import { z } from "zod";

// ---- inputs: chainmail's own parameter pieces (src/daemon/operations/fields.ts) with descriptions --

export const ref = (description: string) => RefField.describe(description);

export const account = (description: string) => AccountField.describe(description);

export const accountList = (description: string) => AccountsField.optional().describe(description);

export const batchRefs = (
  description = `1 to ${MAX_BATCH} refs from search, from any accounts; each acts on its message's own account`,
) => BatchRefsField.describe(description);

export const folderName = (description: string) => FolderField.describe(description);

export const fileDir = DirField.optional().describe(
  "An existing directory as an absolute path, owned by this user and writable by no other user; default ~/.cache/chainmail/attachments ($XDG_CACHE_HOME/chainmail/attachments when set)",
);

/**
 * A field that also takes "", for the arguments where the seed gives empty a meaning ("empty makes a
 * root item", "must be empty when unticking"): the daemon reads "" as an absent parameter. An enum
 * gains "" as a value; a string keeps its maximum and loses its minimum.
 */
export function orEmpty<const T extends readonly string[]>(
  values: T,
): z.ZodEnum<z.core.util.ToEnum<T[number] | "">>;
export function orEmpty(field: z.ZodString): z.ZodString;
export function orEmpty(f: readonly string[] | z.ZodString) {
  if (f instanceof z.ZodString) return z.string().max(f.maxLength ?? Number.POSITIVE_INFINITY);
  return z.enum([...f, ""]);
}

/** The arguments without those given as "", which the daemon's typed call takes as absent. */
export function withoutEmpty<T extends object>(p: T): { [K in keyof T]: Exclude<T[K], ""> } {
  return Object.fromEntries(Object.entries(p).filter(([, v]) => v !== "")) as {
    [K in keyof T]: Exclude<T[K], "">;
  };
}

export const full = (what: string) =>
  z
    .boolean()
    .default(false)
    .describe(`Keep quoted text and signatures, and do not cut ${what} at the daemon's body limit`);

// ---- outputs --------------------------------------------------------------------------------------

/** A failure of one item of a call (a ref, an account, a folder); its text may quote a mail server. */
export const ItemError = z.object({
  reason: z.string().describe("One of the reasons on the error list, such as NOT_FOUND"),
  message: untrustedField("What went wrong"),
  hint: z.string().describe("What to do about it"),
  detail: untrustedField(
    "Outside text that explains the failure, such as the mail server's reply or a folder's name",
  ).optional(),
});

export const Address = z.object({
  name: untrustedField("The display name, empty when there is none"),
  address: untrustedField("The email address"),
});

export const Source = z.enum(["server", "cache", "mixed"]);

export const Attachment = z.object({
  part: z.string().describe("The part to pass to download_attachment, such as 2 or 1.2"),
  filename: untrustedField("The file name the message gives"),
  content_type: untrustedField("The MIME type the message gives"),
  size: z.number().int().describe("Encoded size in bytes as the server reports it"),
  inline: z.boolean(),
});

export const Message = z.object({
  ref: z.string(),
  account: z.string(),
  folder: untrustedField("The folder the message is in"),
  message_id: untrustedField("The Message-ID header").nullable(),
  in_reply_to: untrustedField("The In-Reply-To header").nullable(),
  references: z.array(Untrusted),
  thread_id: untrustedField("The thread's key: the root Message-ID, or the Gmail thread id"),
  date: z.string().nullable().describe("RFC 3339"),
  from: z.array(Address),
  to: z.array(Address),
  cc: z.array(Address),
  bcc: z.array(Address),
  reply_to: z.array(Address),
  subject: untrustedField("The subject line"),
  flags: z.array(z.string()).describe("System flags by short name: seen, flagged, answered, draft, deleted"),
  keywords: z.array(Untrusted).describe("Every other flag, such as $Forwarded"),
  labels: z.array(Untrusted).optional().describe("Gmail labels, on Google accounts"),
  size: z.number().int(),
  body: untrustedField("The body as text"),
  body_truncated: z.boolean(),
  attachments: z.array(Attachment),
  source: z.enum(["server", "cache"]),
});

export const SearchRow = z.object({
  ref: z.string(),
  account: z.string(),
  folder: untrustedField("The folder the message is in"),
  date: z.string().nullable().describe("RFC 3339"),
  from: Address.nullable(),
  subject: untrustedField("The subject line"),
  flags: z.array(z.string()),
  keywords: z.array(Untrusted),
  size: z.number().int(),
  has_attachment: z.boolean(),
  message_id: untrustedField("The Message-ID header").nullable(),
  thread_id: untrustedField("The thread's key"),
  snippet: untrustedField("Up to 200 characters of the body").optional(),
});

export const Partial = z.array(
  z.object({
    account: z.string(),
    folder: untrustedField("The folder that could not be read").optional(),
    error: ItemError,
  }),
);

export const Outcome = z.object({
  ref: z.string().describe("The ref as given"),
  new_ref: z.string().optional().describe("The message's ref from now on, when it has a new one"),
  error: ItemError.optional(),
});

export const BatchOutput = {
  outcomes: z.array(Outcome).describe("One outcome per ref, in the order given"),
  succeeded: z.number().int().describe("How many refs succeeded"),
  failed: z.number().int().describe("How many refs failed, each with its error"),
};
