/**
 * A saved draft made ready to send as it is: its Bcc header removed (every recipient would read it),
 * a fresh Date, and a Message-ID kept (or added when the draft has none). The body is not touched,
 * so what goes out is the draft the owner saw.
 */
import { createHash } from "node:crypto";
import { uniqueAddresses } from "./addresses.js";
import { newMessageId } from "./mime.js";
import { parseOriginal } from "./original.js";

function split(raw: Buffer): { head: string; body: Buffer } {
  const crlf = raw.indexOf("\r\n\r\n");
  const lf = raw.indexOf("\n\n");
  const at = crlf >= 0 && (lf < 0 || crlf <= lf) ? crlf + 4 : lf >= 0 ? lf + 2 : raw.length;
  return { head: raw.subarray(0, at).toString("latin1"), body: raw.subarray(at) };
}

/** Header fields with their folded continuation lines, in order. */
function fields(head: string): string[] {
  const out: string[] = [];
  for (const line of head.split(/\r?\n/)) {
    if (line === "") continue;
    if (/^[ \t]/.test(line) && out.length) out[out.length - 1] += `\r\n${line}`;
    else out.push(line);
  }
  return out;
}

export async function draftForSending(raw: Buffer, fromAddress: string) {
  const parsed = await parseOriginal(raw);
  const { head, body } = split(raw);
  const kept = fields(head).filter((f) => !/^(bcc|date):/i.test(f));
  const messageId = parsed.messageId ?? newMessageId(fromAddress);
  if (!parsed.messageId) kept.unshift(`Message-ID: ${messageId}`);
  kept.unshift(`Date: ${new Date().toUTCString().replace("GMT", "+0000")}`);
  return {
    raw: Buffer.concat([Buffer.from(`${kept.join("\r\n")}\r\n\r\n`, "latin1"), body]),
    messageId,
    envelope: uniqueAddresses([...parsed.to, ...parsed.cc, ...parsed.bcc]).map((a) => a.address),
    sha256: createHash("sha256").update(raw).digest("hex"),
    attachmentBytes: [...parsed.attachments, ...parsed.related].reduce((n, a) => n + a.content.length, 0),
  };
}
