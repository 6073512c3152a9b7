/**
 * The CLI's compose and outbox commands: send, reply, forward, draft create|update|send|delete and
 * outbox [list|confirm KEY|release KEY], and policy [status|confirm]. The body is Markdown from --body unless --text makes it
 * plain text or --html-file gives HTML from a file. File paths may be relative to the working dir.
 */
import fs from "node:fs";
import path from "node:path";
import { uploadBytes } from "../client/upload.js";
import { homeRoots, loadFile } from "../compose/files.js";
import { MailError } from "../errors.js";
import { resolveHome } from "../home.js";
import type { DaemonCommand, Request, Values } from "./command-kit.js";
import { usage } from "./command-kit.js";
import { confirmRequest } from "./confirm.js";

const content = {
  to: { type: "string", multiple: true },
  cc: { type: "string", multiple: true },
  bcc: { type: "string", multiple: true },
  subject: { type: "string" },
  body: { type: "string" },
  text: { type: "boolean" },
  "html-file": { type: "string" },
  attach: { type: "string", multiple: true },
  inline: { type: "string", multiple: true },
  "no-signature": { type: "boolean" },
  key: { type: "string" },
  all: { type: "boolean" },
  draft: { type: "boolean" },
  "no-attachments": { type: "boolean" },
} as const;

type O = Values<typeof content>;
type Flag = keyof typeof content;

/** The flags about the new message's recipients, subject, body and files. */
const MESSAGE: Flag[] = [
  "to",
  "cc",
  "bcc",
  "subject",
  "body",
  "text",
  "html-file",
  "attach",
  "inline",
  "no-signature",
];
/** Each command's own flags: one it does not take is INVALID_ARGUMENT, never silently dropped. */
const FLAGS = {
  send: [...MESSAGE, "key"],
  // A reply's subject is the original's with Re:, a forward's with Fwd:.
  reply: [...MESSAGE.filter((f) => f !== "subject"), "key", "all", "draft"],
  forward: [...MESSAGE.filter((f) => f !== "subject"), "key", "draft", "no-attachments"],
  "draft create": MESSAGE,
  "draft update": MESSAGE,
  "draft send": ["key"],
  "send-raw": ["key"],
  "draft delete": [],
  outbox: [],
} satisfies Record<string, Flag[]>;

const optionsOf = (flags: readonly Flag[]) =>
  Object.fromEntries(flags.map((f) => [f, content[f]])) as unknown as typeof content;

/** For commands whose sub-commands differ in their flags (draft): refuses the ones `what` does not take. */
function only(o: O, what: keyof typeof FLAGS): void {
  const allowed: readonly string[] = FLAGS[what];
  const extra = (Object.keys(content) as Flag[]).find((f) => o[f] !== undefined && !allowed.includes(f));
  if (extra) usage(`chainmail ${what} does not take --${extra}`);
}

const send = (method: string, params: Record<string, unknown>): Request => ({
  // The params are checked by the daemon against the operation's declaration.
  send: (client) => client.call(method as "send", params as never),
});

function body(o: O): Record<string, unknown> {
  if (o.text && o["html-file"]) usage("--text and --html-file cannot be used together");
  const out: Record<string, unknown> = {};
  if (o["html-file"]) {
    try {
      out["body"] = fs.readFileSync(path.resolve(o["html-file"]), "utf8");
    } catch (err) {
      throw new MailError("INVALID_ARGUMENT", `--html-file cannot be read: ${(err as Error).message}`);
    }
    out["body_format"] = "html";
    if (o.body !== undefined) out["html_text"] = o.body;
  } else {
    if (o.body !== undefined) out["body"] = o.body;
    out["body_format"] = o.text ? "text" : "markdown";
  }
  if (o.cc) out["cc"] = o.cc;
  if (o.bcc) out["bcc"] = o.bcc;
  if (o.subject !== undefined) out["subject"] = o.subject;
  if (o.attach) out["attachments"] = o.attach.map((f) => path.resolve(f));
  if (o.inline)
    out["inline"] = o.inline.map((spec) => {
      const at = spec.indexOf("=");
      if (at < 1) usage("--inline takes NAME=PATH, as the body refers to NAME");
      return { name: spec.slice(0, at), path: path.resolve(spec.slice(at + 1)) };
    });
  if (o["no-signature"]) out["no_signature"] = true;
  return out;
}

const key = (o: O) => (o.key ? { idempotency_key: o.key } : {});

const cmd = (flags: readonly Flag[], request: (o: O, args: string[]) => Request): DaemonCommand =>
  ({ options: optionsOf(flags), request }) as unknown as DaemonCommand;

export const COMPOSE_COMMANDS: Record<string, DaemonCommand> = {
  send: cmd(FLAGS.send, (o, args) => {
    if (args.length !== 1) usage("usage: chainmail send ACCOUNT --to ADDR... --subject S [--body TEXT]");
    return send("send", { account: args[0], to: o.to ?? [], ...body(o), ...key(o) });
  }),
  reply: cmd(FLAGS.reply, (o, args) => {
    if (args.length !== 1) usage("usage: chainmail reply REF [--all] [--draft] [--body TEXT]");
    return send("reply", {
      ref: args[0],
      to: o.to ?? [],
      all: o.all ?? false,
      draft: o.draft ?? false,
      ...body(o),
      ...key(o),
    });
  }),
  forward: cmd(FLAGS.forward, (o, args) => {
    if (args.length !== 1) usage("usage: chainmail forward REF --to ADDR... [--no-attachments] [--draft]");
    return send("forward", {
      ref: args[0],
      to: o.to ?? [],
      draft: o.draft ?? false,
      no_attachments: o["no-attachments"] ?? false,
      ...body(o),
      ...key(o),
    });
  }),
  /**
   * The CLI reads the file (as the owner, with the attachments' file rules) and uploads its bytes:
   * no path the daemon would open crosses the socket, and a message larger than one request line fits.
   */
  "send-raw": {
    options: { key: content.key, home: { type: "string" } },
    request: (o: { key?: string; home?: string }, args: string[]): Request => {
      if (args.length !== 2) usage("usage: chainmail send-raw ACCOUNT FILE [--key K]");
      const [account, file] = args as [string, string];
      const home = resolveHome(o.home, process.env);
      const { content: bytes, real } = loadFile(path.resolve(file), "FILE", {
        roots: null,
        home: homeRoots(home),
      });
      return {
        send: async (client) =>
          client.call("send.raw", {
            account,
            upload_id: await uploadBytes(client, bytes, real ?? path.resolve(file)),
            ...(o.key ? { idempotency_key: o.key } : {}),
          }),
      };
    },
  } as unknown as DaemonCommand,
  draft: cmd([...MESSAGE, "key"], (o, args) => {
    const [sub, target] = args;
    if (args.length === 2 && target) {
      if (sub === "create") {
        only(o, "draft create");
        return send("draft.create", { account: target, ...(o.to ? { to: o.to } : {}), ...body(o) });
      }
      if (sub === "update") {
        only(o, "draft update");
        const b = body(o);
        if (o.body === undefined && !o["html-file"]) delete b["body_format"];
        return send("draft.update", { ref: target, ...(o.to ? { to: o.to } : {}), ...b });
      }
      if (sub === "send") {
        only(o, "draft send");
        return send("draft.send", { ref: target, ...key(o) });
      }
      if (sub === "delete") {
        only(o, "draft delete");
        return send("draft.delete", { ref: target });
      }
    }
    usage("usage: chainmail draft create ACCOUNT | update REF | send REF | delete REF");
  }),
  outbox: cmd(FLAGS.outbox, (_o, args) => {
    const [sub = "list", k] = args;
    if (sub === "list" && args.length <= 1) return send("outbox.list", {});
    if (sub === "confirm" && k && args.length === 2) return send("outbox.confirm", { key: k });
    if (sub === "release" && k && args.length === 2) return send("outbox.release", { key: k });
    usage("usage: chainmail outbox [list | confirm KEY | release KEY]");
  }),
  policy: {
    options: { digest: { type: "string" } },
    request: (o: { digest?: string }, args: string[]): Request => {
      const [sub = "status", account] = args;
      if (sub === "status" && args.length <= 1) return send("policy.status", {});
      // Interactive only: refused before the daemon is asked when stdin or stdout is no terminal.
      if (sub === "confirm" && args.length <= 2)
        return confirmRequest(account, o.digest, { input: process.stdin, output: process.stdout });
      usage("usage: chainmail policy [status | confirm [ACCOUNT] [--digest D]]");
    },
  } as unknown as DaemonCommand,
};
