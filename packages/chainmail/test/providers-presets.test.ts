import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../src/config.js";
import { PRESETS, PROVIDERS, presetForDomain, presetForMx } from "../src/providers/presets.js";

const account = (provider: string, extra = "") =>
  `[[accounts]]\nname = "a"\nprovider = "${provider}"\naddress = "me@example.org"\n${extra}`;

const configError = (text: string): string => {
  try {
    parseConfig(text);
  } catch (e) {
    expect((e as { reason: string }).reason).toBe("CONFIG_INVALID");
    return (e as Error).message;
  }
  throw new Error("the config was accepted");
};

describe("provider presets", () => {
  // The table the presets must keep: each provider's documented servers (see the comments in
  // src/providers/presets.ts for the page each comes from).
  const TABLE = [
    ["google", "imap.gmail.com", 993, "tls", "smtp.gmail.com", 465, "tls"],
    ["microsoft", "outlook.office365.com", 993, "tls", "smtp.office365.com", 587, "starttls"],
    ["fastmail", "imap.fastmail.com", 993, "tls", "smtp.fastmail.com", 465, "tls"],
    ["icloud", "imap.mail.me.com", 993, "tls", "smtp.mail.me.com", 587, "starttls"],
    ["yahoo", "imap.mail.yahoo.com", 993, "tls", "smtp.mail.yahoo.com", 465, "tls"],
  ] as const;

  it("covers every provider but imap", () => {
    expect(TABLE.map((r) => r[0]).sort()).toEqual(PROVIDERS.filter((p) => p !== "imap").sort());
  });

  it.each(TABLE)(
    "%s fills the IMAP and SMTP servers of an account that names none",
    (p, ih, ip, it_, sh, sp, st) => {
      const a = parseConfig(account(p)).accounts[0]!;
      expect(a.provider).toBe(p);
      expect(a.imap).toEqual({ host: ih, port: ip, tls: it_ });
      expect(a.smtp).toEqual({ host: sh, port: sp, tls: st });
      expect(a.username).toBe("me@example.org");
    },
  );

  it("lets an explicit key win, key by key", () => {
    const a = parseConfig(
      account("google", `[accounts.imap]\nport = 1993\n[accounts.smtp]\nhost = "relay.example.org"\n`),
    ).accounts[0]!;
    expect(a.imap).toEqual({ host: "imap.gmail.com", port: 1993, tls: "tls" });
    expect(a.smtp).toEqual({ host: "relay.example.org", port: 465, tls: "tls" });
    // Another TLS mode than the preset's takes that mode's default port, not the preset's.
    const b = parseConfig(account("google", `[accounts.smtp]\ntls = "starttls"\n`)).accounts[0]!;
    expect(b.smtp).toEqual({ host: "smtp.gmail.com", port: 587, tls: "starttls" });
    const m = parseConfig(account("microsoft", `[accounts.imap]\nhost = "127.0.0.1"\ntls = "none"\n`))
      .accounts[0]!;
    expect(m.imap).toEqual({ host: "127.0.0.1", port: 143, tls: "none" });
    expect(m.smtp).toEqual(PRESETS.microsoft.smtp);
  });

  it("merges any set of explicit keys over any preset, key by key (property)", () => {
    const presets = PROVIDERS.filter((p) => p !== "imap");
    fc.assert(
      fc.property(
        fc.constantFrom(...presets),
        fc.constantFrom("imap" as const, "smtp" as const),
        fc.option(fc.constantFrom("h.example.org", "127.0.0.1"), { nil: undefined }),
        fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
        fc.option(fc.constantFrom("tls" as const, "starttls" as const, "none" as const), { nil: undefined }),
        (provider, kind, host, port, tls) => {
          const keys = [
            host === undefined ? "" : `host = "${host}"`,
            port === undefined ? "" : `port = ${port}`,
            tls === undefined ? "" : `tls = "${tls}"`,
          ].join("\n");
          const a = parseConfig(account(provider, `[accounts.${kind}]\n${keys}\n`)).accounts[0]!;
          const preset = PRESETS[provider][kind];
          const wantTls = tls ?? preset.tls;
          const defaults = kind === "imap" ? { tls: 993, other: 143 } : { tls: 465, other: 587 };
          const wantPort =
            port ??
            (wantTls === preset.tls ? preset.port : wantTls === "tls" ? defaults.tls : defaults.other);
          expect(a[kind]).toEqual({ host: host ?? preset.host, port: wantPort, tls: wantTls });
          // The other server is the preset's, untouched.
          const other = kind === "imap" ? "smtp" : "imap";
          expect(a[other]).toEqual(PRESETS[provider][other]);
        },
      ),
    );
  });

  it("keeps provider imap's servers its own: no host is still a problem, by path", () => {
    expect(configError(account("imap"))).toContain(
      "accounts[0].imap must be a table with host, port and tls",
    );
    expect(configError(account("imap", `[accounts.imap]\nport = 993\n`))).toContain(
      "accounts[0].imap.host is required",
    );
    expect(parseConfig(account("imap", `[accounts.imap]\nhost = "h"\n`)).accounts[0]!.smtp).toBeUndefined();
  });

  it("still names every problem of a preset account by its path", () => {
    const msg = configError(
      account("fastmail", `[accounts.imap]\nhost = ""\nport = 0\ntls = "ssl"\n[accounts.smtp]\nuser = "x"\n`),
    );
    for (const part of [
      "accounts[0].imap.host must be a non-empty string",
      "accounts[0].imap.port must be an integer from 1 to 65535",
      'accounts[0].imap.tls must be "tls", "starttls" or "none"',
      "accounts[0].smtp.user is not a known setting",
    ])
      expect(msg).toContain(part);
    expect(configError(account("gmail"))).toContain("accounts[0].provider must be one of");
  });

  it.each([
    ["gmail.com", "google"],
    ["GoogleMail.com", "google"],
    ["outlook.com", "microsoft"],
    ["hotmail.com", "microsoft"],
    ["live.com", "microsoft"],
    ["fastmail.com", "fastmail"],
    ["icloud.com", "icloud"],
    ["me.com", "icloud"],
    ["yahoo.com", "yahoo"],
    ["example.org", undefined],
    ["mail.gmail.com", undefined],
  ])("knows the domain %s as %s", (domain, provider) => {
    expect(presetForDomain(domain)?.provider).toBe(provider);
  });

  it.each([
    ["aspmx.l.google.com.", "google"],
    ["ALT2.ASPMX.L.GOOGLE.COM", "google"],
    ["smtp.google.com", "google"],
    ["example-org.mail.protection.outlook.com", "microsoft"],
    ["in1-smtp.messagingengine.com", "fastmail"],
    ["mx01.mail.icloud.com", "icloud"],
    ["mail.protection.outlook.com", undefined],
    ["evilgoogle.com", undefined],
    ["aspmx.l.google.com.evil.example", undefined],
    ["mx.example.org", undefined],
  ])("knows the MX host %s as %s", (host, provider) => {
    expect(presetForMx(host)?.provider).toBe(provider);
  });
});
