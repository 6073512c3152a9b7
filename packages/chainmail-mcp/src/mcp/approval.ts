/**
 * A held send approved in the chat (hold_approval "client"). The daemon first judges the send
 * without sending or saving anything; only when it would be held, and the account lets the person
 * approve it in the client, is the person asked (the client shows the question to the person, never
 * to the model). Then the daemon sends: with `approved` after an accepted "Send", as a plain send
 * (held, saved to Drafts) after anything else. Nothing irreversible happens before the answer, as
 * the kit requires of a handler that asks: the handler may run again from the start with it.
 */
import type { ClientJudgement, ComposeResult } from "@mcpforge/chainmail";
import { type Asking, untrusted } from "@mcpforge/toolkit";
import type { ChainmailContext } from "./context.js";

type SendOp = "send" | "reply" | "forward" | "draft.send";

/** The one fence for untrusted text, as the tools' results carry it: `{"untrusted": "..."}`. */
const fenced = (text: string) => JSON.stringify(untrusted(text));

const DECISION = {
  type: "string",
  title: "Send it?",
  oneOf: [
    { const: "send", title: "Send" },
    { const: "keep", title: "Keep as draft" },
  ],
} as const;

/**
 * The question: why the policy holds it, who is outside it, every recipient, the subject, the
 * Reply-To, where the HTML part's links and images point and every file it carries (each with its
 * size and the start of its SHA-256, so a file changed while the person reads is a new question: the
 * kit uses an answer only for the very question it answers), then the first lines of the text (of
 * the HTML part too when it says something else), last, since a client may cut a long question short.
 */
export function questionOf(j: ClientJudgement): string {
  const why = [
    j.blocked.length ? "recipients outside the account's allowed recipients" : "",
    j.too_many_recipients ? "more recipients than the policy allows" : "",
    j.too_large ? "attachments larger than the policy allows" : "",
  ].filter(Boolean);
  return [
    `The send policy would hold this message (${why.join("; ")}). Send it anyway, or keep it as a draft for later?`,
    "The text below comes from the message, written by the agent or by whoever wrote what it quotes: read it as data.",
    ...(j.blocked.length ? [`Outside the policy: ${j.blocked.map(fenced).join(", ")}`] : []),
    `All recipients: ${j.recipients.map(fenced).join(", ")}`,
    `Subject: ${fenced(j.subject)}`,
    ...(j.reply_to !== undefined ? [`Replies go to (Reply-To): ${fenced(j.reply_to)}`] : []),
    // The files and addresses before the text, the longest part: a client that cuts a long question
    // short cuts the text, of which it says how much it leaves out
    ...(j.html_links !== undefined
      ? [
          `Links and images in the HTML (where they point): ${j.html_links.map(fenced).join(", ")}${j.html_links_more ? ` (and ${j.html_links_more} more)` : ""}`,
        ]
      : []),
    ...(j.files.length
      ? [
          `Attachments: ${j.files.map((f) => `${fenced(f.name)} (${f.bytes} bytes, SHA-256 ${f.sha256.slice(0, 16)})`).join(", ")}`,
        ]
      : ["Attachments: none"]),
    `First lines: ${fenced(j.excerpt)}${notShown(j.more_lines)}`,
    ...(j.html_excerpt !== undefined
      ? [
          `The HTML part, which most mail programs show, says something else; its first lines: ${fenced(j.html_excerpt)}${notShown(j.html_more_lines ?? 0)}`,
        ]
      : []),
  ].join("\n");
}

/** What the question says of the lines of a text it leaves out. */
const notShown = (lines: number) => (lines > 0 ? ` (and ${lines} more line(s) not shown)` : "");

/** The person's OK, as the daemon's `approved` param takes it. */
export interface ClientApproval {
  by: "client";
  answer_id: string;
  /** The judgement's fingerprint: the daemon sends only a message built from the input and config judged. */
  judged: string;
}

/** The params without their files: enough for the daemon to say whose account it is, uploading nothing. */
function withoutFiles(params: object): { params: object; files: boolean } {
  const { attachments, inline, ...rest } = params as { attachments?: unknown[]; inline?: unknown[] };
  return { params: rest, files: (attachments?.length ?? 0) + (inline?.length ?? 0) > 0 };
}

/**
 * Sends through the daemon, asking the person first when the send would be held and the account's
 * hold_approval is "client". `params` are the operation's params as the tool got them (file paths);
 * `upload` names the files by fresh uploads (each daemon call uses its uploads up); `send` makes the
 * daemon call itself, with the approval when the person accepted "Send".
 */
export async function sendWithApproval<P extends object>(
  ctx: ChainmailContext,
  ask: Asking["ask"],
  op: SendOp,
  params: P,
  upload: (p: P) => Promise<P>,
  send: (approved?: ClientApproval) => Promise<ComposeResult>,
): Promise<ComposeResult> {
  // First without the files: an account left to its owner is answered at once, nothing uploaded.
  const bare = withoutFiles(params);
  let j = await ctx.client.call("send.judge", { op, params: { ...bare.params } });
  // The files change the verdict (their size) and the key (their contents): judge the whole send.
  if (j.hold_approval === "client" && bare.files)
    j = await ctx.client.call("send.judge", { op, params: { ...((await upload(params)) as object) } });
  if (j.hold_approval === "client" && j.outcome === "hold") {
    const answer = await ask({ message: questionOf(j), fields: { decision: DECISION } });
    if (answer.action === "accept" && answer.content.decision === "send")
      return send({ by: "client", answer_id: answer.id, judged: j.fingerprint });
  }
  // Declined, cancelled, kept, a client that cannot ask, or an account left to its owner: a plain
  // send, which the policy holds (saved to Drafts) as it always did.
  return send();
}
