// The benchmark's mailbox generator (src/testing/mailbox.ts): the same bytes for the same message
// whatever was generated before it, other mail for another seed, and the skew of a real archive —
// a few senders, lists and words take most of the mail, at the shares the generator's model says
// (so a 100,000-message run has senders with thousands of messages and a million-message one tens
// of thousands), threads under one subject, a rare word that is rare.
import { simpleParser } from "mailparser";
import { describe, expect, it } from "vitest";
import {
  MAILBOX_GENERATOR_VERSION,
  OWNER_ADDRESS,
  RARE_WORD,
  mailboxList,
  mailboxMessage,
  mailboxSender,
  mailboxSenderShare,
  mailboxYears,
} from "../src/testing/mailbox.js";

const N = 8000;
const mail = Array.from({ length: N }, (_, i) => mailboxMessage(i, N));
const header = (raw: string, name: string) =>
  new RegExp(`\\r\\n${name}: ([^\\r]*(?:\\r\\n [^\\r]*)*)`).exec(`\r\n${raw}`)?.[1] ?? "";

describe("the mailbox generator", () => {
  it("makes the same bytes for a message in any order of generation, and other mail for another seed", () => {
    expect(MAILBOX_GENERATOR_VERSION).toBeGreaterThan(1);
    // Multipart messages too (their MIME boundaries once came from a process-wide counter)
    const multipart = mail
      .map((m, i) => ({ m, i }))
      .filter(({ m }) => m.kind !== "text")
      .slice(0, 20);
    expect(multipart.length).toBe(20);
    for (const { m, i } of [...multipart].reverse()) expect(mailboxMessage(i, N).raw).toBe(m.raw);
    const other = Array.from({ length: 50 }, (_, i) => mailboxMessage(i, N, { seed: 7 }).raw);
    expect(other.filter((raw, i) => raw === mail[i]?.raw).length).toBeLessThan(5);
  });

  it("skews senders as its model says: the top ones have thousands at 100,000 and tens of thousands at 1,000,000", () => {
    const bySender = new Map<number, number>();
    for (const m of mail) bySender.set(m.sender, (bySender.get(m.sender) ?? 0) + 1);
    const count = (r: number) => bySender.get(r) ?? 0;
    // The model's shares, checked against what it made (within sampling error)
    for (const r of [0, 1, 2])
      expect(Math.abs(count(r) - mailboxSenderShare(r) * N)).toBeLessThan(
        4 * Math.sqrt(mailboxSenderShare(r) * N) + 5,
      );
    expect(count(0)).toBeGreaterThan(count(5));
    expect(count(5)).toBeGreaterThan(count(100));
    expect(mailboxSenderShare(0) * 100_000).toBeGreaterThan(1_000);
    expect(mailboxSenderShare(0) * 1_000_000).toBeGreaterThan(10_000);
    // ... and a long tail: thousands of people with a message or two
    const singles = [...bySender.values()].filter((n) => n <= 2).length;
    expect(singles).toBeGreaterThan(N / 4);
    // The owner sends some, receives most
    expect(count(-1) / N).toBeGreaterThan(0.02);
    expect(mail.filter((m) => header(m.raw, "To").includes(OWNER_ADDRESS)).length / N).toBeGreaterThan(0.6);
    // The address the benchmark's from: query names is the one that sent them
    const top = mail.find((m) => m.sender === 0)?.raw ?? "";
    expect(header(top, "From")).toContain(`<${mailboxSender(0)}>`);
  });

  it("skews lists and words, threads under one subject, and keeps the rare word rare", async () => {
    const lists = new Map<number, number>();
    for (const m of mail) if (m.list >= 0) lists.set(m.list, (lists.get(m.list) ?? 0) + 1);
    const onLists = [...lists.values()].reduce((a, b) => a + b, 0);
    expect(onLists / N).toBeGreaterThan(0.15);
    expect(lists.get(0) ?? 0).toBeGreaterThan(5 * (lists.get(20) ?? 0));
    const toList = mail.find((m) => m.list === 0)?.raw ?? "";
    expect(header(toList, "To")).toBe(mailboxList(0));
    // The commonest subject word in about a fifth of the subjects, a mid-rank one in far fewer
    const subjects = mail.map((m) => m.spec.subject);
    const share = (w: string) => subjects.filter((s) => s.split(" ").includes(w)).length / N;
    expect(share("update")).toBeGreaterThan(0.12);
    expect(share("update")).toBeLessThan(0.35);
    expect(share("update")).toBeGreaterThan(20 * share("deadline"));
    // A reply carries its thread's first subject after "Re: "
    const replies = mail.filter((m) => m.threadRoot !== mail.indexOf(m));
    expect(replies.length / N).toBeGreaterThan(0.25);
    for (const r of replies.slice(0, 50))
      expect(r.spec.subject).toBe(`Re: ${mail[r.threadRoot]?.spec.subject}`);
    const parsed = await simpleParser(replies[0]?.raw ?? "");
    expect(parsed.inReplyTo).toMatch(/^<m\d+@bench\.example>$/);
    // The rare word: in at least one message, about one in 20,000
    const rare = mail.filter((m) => (m.spec.text ?? m.spec.html ?? "").includes(RARE_WORD)).length;
    expect(rare).toBeGreaterThanOrEqual(1);
    expect(rare).toBeLessThanOrEqual(Math.ceil(N / 20_000) + 1);
    // The span: 3 years here, 15 at a million
    const days = (mail[N - 1]?.date.getTime() ?? 0) - (mail[0]?.date.getTime() ?? 0);
    expect(Math.round(days / (365 * 86_400_000))).toBe(3);
    expect(mailboxYears(1_000_000)).toBe(15);
  });
});
