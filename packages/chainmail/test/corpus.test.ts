import { simpleParser } from "mailparser";
import { describe, expect, it } from "vitest";
import { buildMessage, encodeHeader, generateCorpus, INJECTION_TEXT } from "../src/testing/corpus.js";
import { mailboxMessage, mailboxSender } from "../src/testing/mailbox.js";

describe("generated corpus", () => {
  const corpus = generateCorpus({ hugeBytes: 200_000 });

  it("parses back to what was generated", async () => {
    for (const m of corpus) {
      const p = await simpleParser(m.raw);
      expect(p.subject).toBe(m.spec.subject);
      expect(p.messageId).toBe(m.spec.messageId);
      expect(p.attachments.length).toBe(m.spec.attachments?.length ?? 0);
    }
  });

  it("links threads by In-Reply-To and References", async () => {
    const thread = corpus.filter((m) => m.tags.includes("thread:2"));
    expect(thread).toHaveLength(3);
    const last = await simpleParser(thread[2]!.raw);
    expect(last.inReplyTo).toBe(thread[1]!.spec.messageId);
    expect(last.references).toEqual([thread[0]!.spec.messageId, thread[1]!.spec.messageId]);
  });

  it("encodes non-ASCII headers per RFC 2047 and keeps lines short", async () => {
    const m = corpus.find((x) => x.tags.includes("non-ascii"))!;
    expect(m.raw).toContain("=?UTF-8?B?");
    for (const line of m.raw.split("\r\n")) expect(line.length).toBeLessThanOrEqual(998);
    const p = await simpleParser(m.raw);
    expect(p.from?.value[0]?.name).toBe("Jürgen Müller");
    expect(encodeHeader("plain")).toBe("plain");
  });

  it("has an HTML-only message with an attachment, the injection text and a huge message", async () => {
    const html = corpus.find((x) => x.tags.includes("html-only"))!;
    const p = await simpleParser(html.raw);
    expect(p.html).toContain("quarterly");
    expect(corpus.find((x) => x.tags.includes("injection"))!.raw).toContain(INJECTION_TEXT);
    expect(corpus.find((x) => x.tags.includes("huge"))!.raw.length).toBeGreaterThan(200_000);
  });

  it("builds CRLF-only messages", () => {
    const raw = buildMessage({
      from: "a@b.c",
      to: ["d@e.f"],
      subject: "s",
      date: new Date(0),
      messageId: "<x@y>",
      text: "one\ntwo\n",
    });
    expect(raw.replace(/\r\n/g, "")).not.toContain("\n");
  });
});

describe("mailbox-sized corpus", () => {
  const N = 600;
  const msgs = Array.from({ length: N }, (_, i) => mailboxMessage(i, N));

  it("has real mail's mix: attachments, HTML-only, alternatives, RFC 2047, threads, flags", async () => {
    const share = (f: (m: (typeof msgs)[number]) => boolean) => msgs.filter(f).length / N;
    expect(share((m) => m.kind === "attachment" || m.kind === "html-attachment")).toBeGreaterThan(0.1);
    expect(share((m) => m.kind === "html-only" || m.kind === "html-attachment")).toBeGreaterThan(0.05);
    expect(share((m) => m.kind === "alternative")).toBeGreaterThan(0.1);
    expect(share((m) => m.encodedSubject && m.raw.includes("Subject: =?UTF-8?B?"))).toBeGreaterThan(0.05);
    expect(share((m) => m.raw.includes("\r\nIn-Reply-To: <m"))).toBeGreaterThan(0.2);
    expect(share((m) => !m.flags.includes("\\Seen"))).toBeGreaterThan(0.2);
    const bytes = msgs.reduce((n, m) => n + m.raw.length, 0) / N;
    expect(bytes).toBeGreaterThan(8_000);
    expect(bytes).toBeLessThan(40_000);
    expect(Math.max(...msgs.map((m) => m.raw.length))).toBeGreaterThan(1 << 20);
    for (const m of msgs.filter((x) => x.kind === "html-only").slice(0, 5)) {
      expect(m.raw).not.toContain("text/plain");
      expect((await simpleParser(m.raw)).html).toContain("<p>");
    }
    const enc = msgs.find((m) => m.encodedSubject) as (typeof msgs)[number];
    expect((await simpleParser(enc.raw)).subject).toMatch(/[^ -~]/);
  });

  it("is the same message for the same index", () => {
    expect(mailboxMessage(17, N).raw).toBe(msgs[17]?.raw);
    expect(mailboxSender(3)).toMatch(/^[a-z]+@[a-z]+\.example$/);
    expect(mailboxSender(300)).toMatch(/^[a-z]+\.[a-z]+300@[a-z]+\.example$/);
  });
});
