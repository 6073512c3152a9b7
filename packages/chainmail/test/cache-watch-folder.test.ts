/**
 * Which folder the daemon's watch IDLEs on: All Mail for a Google account (its provider preset, or a
 * server with Google's X-GM-EXT-1), where every message but Spam and Trash is and so every change
 * shows; INBOX for every other server. Unit level: Google itself is not reachable from the tests
 * (google.test.ts checks the same against the Gmail-like test server).
 */
import { describe, expect, it } from "vitest";
import { watchFolderFor } from "../src/cache/index.js";
import { PROVIDERS } from "../src/providers/presets.js";

const gmailFolders = [
  { path: "INBOX", specialUse: "\\Inbox" },
  { path: "[Gmail]/All Mail", specialUse: "\\All" },
  { path: "[Gmail]/Sent Mail", specialUse: "\\Sent" },
  { path: "[Gmail]/Trash", specialUse: "\\Trash" },
  { path: "Work" },
];
const caps = (...names: string[]) => new Set(names);

describe("watchFolderFor", () => {
  it("picks All Mail for the google preset, whatever the capabilities say", () => {
    expect(watchFolderFor("google", caps("IMAP4rev1", "IDLE"), gmailFolders)).toBe("[Gmail]/All Mail");
  });

  it("picks All Mail on a server with X-GM-EXT-1 set up by hand", () => {
    expect(watchFolderFor("imap", caps("IMAP4rev1", "X-GM-EXT-1"), gmailFolders)).toBe("[Gmail]/All Mail");
  });

  it("finds All Mail by its special use, under any name (localized Gmail)", () => {
    const de = [{ path: "INBOX" }, { path: "[Google Mail]/Alle Nachrichten", specialUse: "\\All" }];
    expect(watchFolderFor("google", caps(), de)).toBe("[Google Mail]/Alle Nachrichten");
  });

  it("falls back to INBOX on Google when no folder is marked \\All (All Mail hidden from IMAP)", () => {
    expect(watchFolderFor("google", caps("X-GM-EXT-1"), [{ path: "INBOX" }, { path: "Work" }])).toBe("INBOX");
  });

  it("picks INBOX for every other provider, even where a folder is marked \\All", () => {
    for (const p of PROVIDERS.filter((x) => x !== "google"))
      expect(watchFolderFor(p, caps("IMAP4rev1", "NOTIFY"), gmailFolders)).toBe("INBOX");
    expect(watchFolderFor(undefined, caps("IMAP4rev1"), gmailFolders)).toBe("INBOX");
  });
});
