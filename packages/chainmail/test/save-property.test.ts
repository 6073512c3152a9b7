/**
 * download_attachment's file promises, attacked with names a hostile sender writes (fast-check),
 * over the real daemon and Dovecot and judged on the real file system: whatever the name (`..`, `/`,
 * NUL and other controls, U+202E, zero-width characters, 255+ bytes of UTF-8 cut anywhere, all dots,
 * empty, Windows device names) and however the MIME parameter carries it (quoted, RFC 2231 whole or
 * in continuations split mid-character, RFC 2047 B and Q, on Content-Disposition or Content-Type's
 * name alone), the new file is a direct child of the dir that did not exist before, mode 0600, with
 * the attachment's decoded bytes, and nothing else in the dir changed: not a decoy file, not a
 * symlink planted at the name the file took before (the second download of the same attachment
 * takes another name and writes nothing through the link).
 */
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { encodeRef } from "../src/refs.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

let env: MailEnv;
let base: string;
/** A file outside every save dir that a planted symlink points at. */
let victim: string;

beforeAll(async () => {
  env = await startMailEnv({});
  await env.confirmPolicy();
  base = fs.mkdtempSync(path.join(os.tmpdir(), "cm-saveprop-"));
  victim = path.join(base, "victim.txt");
  fs.writeFileSync(victim, "the victim's own bytes");
}, 60_000);
afterAll(async () => {
  await env?.stop();
  if (base) fs.rmSync(base, { recursive: true, force: true });
});

/** Pieces of hostile names; joined in any order and number. */
const piece = fc.oneof(
  fc.constantFrom(
    ".",
    "..",
    "/",
    "\\",
    "../",
    "/etc/passwd",
    "\u0000",
    "\u0001",
    "\u001b[31m",
    "\u007f",
    "\r\n",
    "\t",
    " ",
    "\u202e",
    "\u202d",
    "\u2066",
    "\u200b",
    "\ufeff",
    "\u00ad",
    "\u2028",
    "\ufe0f",
    "é",
    "e\u0301",
    "😀",
    "日本語",
    "\ud800",
    "a",
    "report",
    ".pdf",
    ".exe",
    ".tar.gz",
    "CON",
    "NUL",
    "aux.txt",
    "COM1",
    "~",
    "-rf",
    "$(id)",
    "`id`",
    '"',
    "'",
    ";",
    "%",
    "%00",
    "=?",
    "?=",
    "*",
    ".chainmail-0123456789abcdef.part",
    "message.eml",
  ),
  fc.constantFrom("é".repeat(130), "😀".repeat(70), "a".repeat(300), ". ".repeat(150), "日".repeat(90)),
  fc.string({ unit: "binary", maxLength: 8 }),
);
const hostileName = fc.array(piece, { maxLength: 12 }).map((parts) => parts.join(""));

type Carrier = "quoted" | "rfc2231" | "rfc2231-split" | "rfc2047-b" | "rfc2047-q";

const pct = (bytes: Buffer) =>
  [...bytes]
    .map((b) =>
      /[A-Za-z0-9!#$&+.^_`|~-]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, "0")}`,
    )
    .join("");

/** The name as MIME parameters called `param` (filename or name), folded one per line. */
function encodeParam(param: string, name: string, carrier: Carrier, cuts: number[]): string {
  const bytes = Buffer.from(name, "utf8");
  switch (carrier) {
    case "quoted":
      // Raw UTF-8 in a quoted string (RFC 6532), CR and LF left out: they would end the header.
      return `${param}="${name.replace(/[\r\n]/g, "").replace(/[\\"]/g, (c) => `\\${c}`)}"`;
    case "rfc2231":
      return `${param}*=UTF-8''${pct(bytes)}`;
    case "rfc2231-split": {
      // Continuations cut at byte offsets, so a character's bytes can fall in two segments.
      const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
      const segs: Buffer[] = [];
      let from = 0;
      for (const c of [...at, bytes.length]) {
        if (c > from) segs.push(bytes.subarray(from, c));
        from = Math.max(from, c);
      }
      if (segs.length === 0) segs.push(Buffer.alloc(0));
      return segs.map((s, i) => `${param}*${i}*=${i === 0 ? "UTF-8''" : ""}${pct(s)}`).join(";\r\n\t");
    }
    case "rfc2047-b":
      return `${param}="=?UTF-8?B?${bytes.toString("base64")}?="`;
    case "rfc2047-q":
      return `${param}="=?UTF-8?Q?${[...bytes].map((b) => (/[A-Za-z0-9]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `=${b.toString(16).toUpperCase().padStart(2, "0")}`)).join("")}?="`;
  }
}

/**
 * How the part says it is an attachment: Content-Disposition: attachment, or a name on Content-Type
 * alone (no Content-Disposition), as binary or as text in another charset or format=flowed (text
 * the IMAP library would turn into UTF-8 or unwrap, which is not the attachment's bytes).
 */
type Shape = "attachment" | "name-only" | "latin1-text" | "sjis-text" | "flowed-text";

const TYPE: Record<Exclude<Shape, "attachment">, string> = {
  "name-only": "application/octet-stream",
  "latin1-text": "text/plain; charset=iso-8859-1",
  "sjis-text": "text/plain; charset=shift_jis",
  "flowed-text": "text/plain; charset=us-ascii; format=flowed; delsp=yes",
};

function messageWith(name: string, carrier: Carrier, cuts: number[], shape: Shape, content: Buffer): string {
  const id = crypto.randomBytes(6).toString("hex");
  const param = (p: string) => encodeParam(p, name, carrier, cuts);
  const headers =
    shape === "attachment"
      ? [
          "Content-Type: application/octet-stream",
          `Content-Disposition: attachment;\r\n\t${param("filename")}`,
        ]
      : [`Content-Type: ${TYPE[shape]};\r\n\t${param("name")}`];
  return [
    "From: stranger@evil.test",
    "To: alice@example.com",
    `Subject: hostile name ${id}`,
    `Message-ID: <${id}@evil.test>`,
    "MIME-Version: 1.0",
    'Content-Type: multipart/mixed; boundary="b-b"',
    "",
    "--b-b",
    "Content-Type: text/plain",
    "",
    "see attached",
    "--b-b",
    ...headers,
    "Content-Transfer-Encoding: base64",
    "",
    content.toString("base64").replace(/.{76}/g, "$&\r\n"),
    "--b-b--",
    "",
  ].join("\r\n");
}

interface Entry {
  kind: "file" | "symlink" | "other";
  ino: number;
  mtimeMs: number;
  bytes: string;
}

/** What each entry of `dir` is: kind, inode, mtime and content (a symlink's target). */
function snapshot(dir: string): Map<string, Entry> {
  const out = new Map<string, Entry>();
  for (const name of fs.readdirSync(dir)) {
    const p = path.join(dir, name);
    const st = fs.lstatSync(p);
    const kind = st.isSymbolicLink() ? "symlink" : st.isFile() ? "file" : "other";
    const bytes =
      kind === "symlink" ? fs.readlinkSync(p) : kind === "file" ? fs.readFileSync(p).toString("hex") : "";
    out.set(name, { kind, ino: st.ino, mtimeMs: st.mtimeMs, bytes });
  }
  return out;
}

/** Every entry of `before` is still there unchanged, and `after` has exactly one more: `added`. */
function onlyAdded(before: Map<string, Entry>, after: Map<string, Entry>, added: string) {
  expect(before.has(added), `${JSON.stringify(added)} existed before`).toBe(false);
  expect([...after.keys()].sort()).toEqual([...before.keys(), added].sort());
  for (const [name, e] of before) expect(after.get(name), name).toEqual(e);
}

/** The promises on one saved file. */
function judge(dir: string, saved: { path: string; size: number; filename: string }, content: Buffer) {
  expect(path.dirname(saved.path)).toBe(dir);
  const name = path.basename(saved.path);
  // No lone surrogate (a character cut in two): its UTF-8 would not be the name asked for
  expect(Buffer.from(name, "utf8").toString("utf8"), "whole characters").toBe(name);
  expect(Buffer.byteLength(name)).toBeLessThanOrEqual(255);
  expect(name).not.toMatch(/^\.|[/\\]|[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u);
  expect(["", ".", ".."]).not.toContain(name);
  const st = fs.lstatSync(saved.path);
  expect(st.isFile()).toBe(true);
  expect(st.nlink, "one name: the temp file is gone").toBe(1);
  expect(st.mode & 0o7777).toBe(0o600);
  expect(saved.size).toBe(content.length);
  expect(fs.readFileSync(saved.path).equals(content)).toBe(true);
}

it("saves any hostile name as a new 0600 child of the dir with the attachment's bytes, touching nothing else (fast-check)", async () => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(
      hostileName,
      fc.constantFrom<Carrier>("quoted", "rfc2231", "rfc2231-split", "rfc2047-b", "rfc2047-q"),
      fc.array(fc.nat(600), { maxLength: 6 }),
      fc.constantFrom<Shape>("attachment", "name-only", "latin1-text", "sjis-text", "flowed-text"),
      fc.uint8Array({ maxLength: 3000 }),
      async (name, carrier, cuts, shape, bytes) => {
        const content = Buffer.from(bytes);
        const dir = path.join(base, `d${run++}`);
        fs.mkdirSync(dir, { mode: 0o700 });
        // Decoys a bad name could land on or through
        fs.writeFileSync(path.join(dir, "attachment"), "decoy");
        fs.writeFileSync(path.join(dir, "message.eml"), "decoy");
        fs.writeFileSync(path.join(dir, "etc_passwd"), "decoy");
        fs.symlinkSync(victim, path.join(dir, "report.pdf"));

        const put = await env.dv.appendMessage(
          "alice",
          "INBOX",
          messageWith(name, carrier, cuts, shape, content),
        );
        const ref = encodeRef({
          account: "work",
          folder: "INBOX",
          uidValidity: put.uidValidity,
          uid: put.uid,
        });
        const [msg] = (await env.client.getMessages({ refs: [ref] })).messages;
        const att = msg?.attachments.find((a) => a.part === "2");
        expect(att, "the part is listed as an attachment").toBeDefined();

        const before = snapshot(dir);
        const first = await env.client.downloadAttachment({ ref, part: "2", dir });
        judge(dir, first, content);
        const mid = snapshot(dir);
        onlyAdded(before, mid, path.basename(first.path));

        // Its name now a symlink to the victim: the same attachment again takes another name.
        fs.rmSync(first.path);
        fs.symlinkSync(victim, first.path);
        const planted = snapshot(dir);
        const second = await env.client.downloadAttachment({ ref, part: "2", dir });
        judge(dir, second, content);
        expect(second.path).not.toBe(first.path);
        onlyAdded(planted, snapshot(dir), path.basename(second.path));
        expect(fs.readFileSync(victim, "utf8")).toBe("the victim's own bytes");
        fs.rmSync(dir, { recursive: true, force: true });
      },
    ),
    { numRuns: 60 },
  );
}, 240_000);

it("saves a text attachment named on Content-Type alone as its bytes: no charset conversion, no flowed unwrapping", async () => {
  // A Latin-1 CSV, a Shift_JIS note and flowed text, each named on Content-Type with no
  // Content-Disposition (as some mailers send them): listed as attachments, so saved as they are.
  const cases: Array<[Shape, Buffer]> = [
    ["latin1-text", Buffer.from("name;city\r\nJos\xe9;M\xfcnchen\r\n", "latin1")],
    ["sjis-text", Buffer.from([0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea, 0x0d, 0x0a])],
    ["flowed-text", Buffer.from("a line cut \r\nin two \r\n>quoted\r\n")],
  ];
  for (const [shape, content] of cases) {
    const dir = fs.mkdtempSync(path.join(base, "text-"));
    fs.chmodSync(dir, 0o700);
    const put = await env.dv.appendMessage(
      "alice",
      "INBOX",
      messageWith("data.txt", "quoted", [], shape, content),
    );
    const ref = encodeRef({ account: "work", folder: "INBOX", uidValidity: put.uidValidity, uid: put.uid });
    const [msg] = (await env.client.getMessages({ refs: [ref] })).messages;
    expect(msg?.attachments.map((a) => a.filename)).toEqual(["data.txt"]);
    const saved = await env.client.downloadAttachment({ ref, part: "2", dir });
    expect(fs.readFileSync(saved.path).toString("hex"), shape).toBe(content.toString("hex"));
    expect(saved.size, shape).toBe(content.length);
  }
}, 60_000);
