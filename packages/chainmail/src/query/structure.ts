import type { MessageStructureObject } from "imapflow";

export interface AttachmentInfo {
  /** IMAP body part number, e.g. "2" or "1.2" ("1" for a single-part message). */
  part: string;
  filename: string | null;
  content_type: string;
  size: number;
  disposition: string | null;
}

/**
 * The attachments of a message from its BODYSTRUCTURE. A leaf part is an attachment when its
 * disposition is `attachment`, when it is a forwarded message/rfc822, or when it carries a file
 * name and is not marked `inline`. Text bodies without a file name never count. The cache and the
 * IMAP post-filter both use this, so `has:attachment` means the same on both paths.
 */
export function attachmentsFromStructure(root: MessageStructureObject | undefined | null): AttachmentInfo[] {
  const out: AttachmentInfo[] = [];
  const walk = (node: MessageStructureObject, fallbackPart: string) => {
    const type = (node.type ?? "").toLowerCase();
    if (type.startsWith("multipart/")) {
      for (const child of node.childNodes ?? []) walk(child, child.part ?? fallbackPart);
      return;
    }
    const disposition = node.disposition ? node.disposition.toLowerCase() : null;
    const filename = node.dispositionParameters?.filename ?? node.parameters?.name ?? null;
    const isAttachment =
      disposition === "attachment" ||
      type === "message/rfc822" ||
      (filename !== null && disposition !== "inline");
    if (!isAttachment) return;
    out.push({
      part: node.part ?? fallbackPart,
      filename,
      content_type: type,
      size: node.size ?? 0,
      disposition,
    });
  };
  if (root) walk(root, "1");
  return out;
}
