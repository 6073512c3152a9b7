import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig, parseConfig } from "../src/config.js";
import { appendEntry, askMissing, draftAccount, renderEntry, suggestName } from "../src/providers/add.js";
import { probeAddress } from "../src/providers/probe.js";

const dirs: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "cm-add-"));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const offline = (address: string) => probeAddress(address, { network: false });
const load = (entry: string) => parseConfig(entry).accounts[0]!;
const DAY = new Date("2026-01-02T03:04:05Z");

describe("accounts add: the entry", () => {
  it("writes a preset account as its provider alone, and it loads with the preset's servers", async () => {
    const p = draftAccount(await offline("me@gmail.com"), {}, []);
    expect(p.missing).toEqual([]);
    const entry = renderEntry(p.draft!, DAY);
    expect(entry).toContain("# Added by `chainmail accounts add` on 2026-01-02.");
    expect(entry).toContain('# imap: imap.gmail.com:993 tls, from the "google" preset');
    expect(entry).not.toContain("[accounts.imap]");
    expect(load(entry)).toMatchObject({
      name: "gmail",
      provider: "google",
      address: "me@gmail.com",
      username: "me@gmail.com",
      imap: { host: "imap.gmail.com", port: 993, tls: "tls" },
      smtp: { host: "smtp.gmail.com", port: 465, tls: "tls" },
    });
  });

  it("writes the servers it was given or found, with where each came from", async () => {
    const p = draftAccount(
      await offline("jo@example.org"),
      {
        name: "work",
        username: 'jo "the" user',
        imap: { host: "mail.example.org", tls: "starttls" },
        smtp: { host: "smtp.example.org", port: 2525, tls: "starttls" },
      },
      ["home"],
    );
    const entry = renderEntry(p.draft!, DAY);
    expect(entry).toContain("[accounts.imap]  # from your answer");
    expect(load(entry)).toMatchObject({
      name: "work",
      provider: "imap",
      username: 'jo "the" user',
      imap: { host: "mail.example.org", port: 143, tls: "starttls" },
      smtp: { host: "smtp.example.org", port: 2525, tls: "starttls" },
    });
    // Another port than the preset's writes the whole server, so the preset no longer decides it.
    const g = draftAccount(await offline("me@gmail.com"), { imap: { port: 1993 } }, []);
    expect(load(renderEntry(g.draft!))).toMatchObject({
      imap: { host: "imap.gmail.com", port: 1993, tls: "tls" },
    });
    const none = draftAccount(
      await offline("me@example.org"),
      { imap: { host: "h.example.org" }, noSmtp: true },
      [],
    );
    const e = renderEntry(none.draft!);
    expect(e).toContain("# no SMTP server: this account reads mail but cannot send");
    expect(load(e).smtp).toBeUndefined();
  });

  it("says what is missing, and asks for it", async () => {
    const found = await offline("me@nowhere.test");
    expect(draftAccount(found, {}, ["nowhere"]).missing).toEqual(["name", "imap.host", "smtp.host"]);
    const replies = ["mine", "imap.nowhere.test", "starttls", "", "smtp.nowhere.test", "tls", "1465"];
    const questions: string[] = [];
    const answers = await askMissing(["name", "imap.host", "smtp.host"], {}, async (q) => {
      questions.push(q);
      return replies.shift() ?? "";
    });
    expect(questions).toHaveLength(7);
    expect(questions[3]).toBe("IMAP port [143]: ");
    const d = draftAccount(found, answers, ["nowhere"]).draft!;
    expect(load(renderEntry(d))).toMatchObject({
      name: "mine",
      imap: { host: "imap.nowhere.test", port: 143, tls: "starttls" },
      smtp: { host: "smtp.nowhere.test", port: 1465, tls: "tls" },
    });
    // An empty SMTP host is "no SMTP".
    const noSmtp = await askMissing(["smtp.host"], {}, async () => "");
    expect(noSmtp.noSmtp).toBe(true);
    await expect(
      askMissing(["imap.host"], {}, async (q) => (q.includes("TLS") ? "ssl" : "h")),
    ).rejects.toMatchObject({
      reason: "INVALID_ARGUMENT",
    });
  });

  it("refuses a taken or invalid name, an unknown provider and bad servers", async () => {
    const found = await offline("me@gmail.com");
    expect(() => draftAccount(found, {}, ["x"])).not.toThrow();
    expect(() => draftAccount(found, { name: "x" }, ["x"])).toThrow(
      expect.objectContaining({ reason: "CONFLICT" }),
    );
    for (const bad of [
      { name: "-x" },
      { name: "a b" },
      { provider: "aol" },
      { imap: { tls: "ssl" } },
      { imap: { port: 0 } },
      { smtp: { host: "h" }, noSmtp: true },
    ])
      expect(() => draftAccount(found, bad, [])).toThrow(
        expect.objectContaining({ reason: "INVALID_ARGUMENT" }),
      );
    expect(suggestName("me@gmail.com", ["gmail"])).toBeUndefined();
  });
});

describe("accounts add: the file", () => {
  const entry = async (address: string, name?: string) =>
    renderEntry(draftAccount(await offline(address), name ? { name } : {}, []).draft!);

  it("creates config.toml and its directory, and appends to one that exists", async () => {
    const file = path.join(tmp(), "deep", "config.toml");
    expect(appendEntry(file, await entry("me@gmail.com"))).toEqual({ created: true });
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    // A file without a final newline, with its own comments and sections, keeps them.
    fs.writeFileSync(file, `${fs.readFileSync(file, "utf8")}[cache]\nbackground = false # mine`);
    expect(appendEntry(file, await entry("me@icloud.com"))).toEqual({ created: false });
    const c = loadConfig(file);
    expect(c.accounts.map((a) => `${a.name}:${a.provider}:${a.imap.host}`)).toEqual([
      "gmail:google:imap.gmail.com",
      "icloud:icloud:imap.mail.me.com",
    ]);
    expect(c.cache.background).toBe(false);
    expect(fs.readFileSync(file, "utf8")).toContain("background = false # mine\n\n# Added by");
  });

  it("writes nothing when the result would not load", async () => {
    const file = path.join(tmp(), "config.toml");
    const broken = "[[accounts]]\nname = 1\n";
    fs.writeFileSync(file, broken);
    expect(() => appendEntry(file, "[[accounts]]\n")).toThrow(
      expect.objectContaining({ reason: "CONFIG_INVALID" }),
    );
    expect(fs.readFileSync(file, "utf8")).toBe(broken);
    expect(fs.readdirSync(path.dirname(file))).toEqual(["config.toml"]);
    // The same name twice is refused by the config's own check too.
    fs.writeFileSync(file, "");
    appendEntry(file, await entry("me@gmail.com"));
    const twice = await entry("you@gmail.com");
    const before = fs.readFileSync(file, "utf8");
    expect(() => appendEntry(file, twice)).toThrow(/"gmail" is used by another account/);
    expect(fs.readFileSync(file, "utf8")).toBe(before);
  });
});
