/**
 * Provider presets: the one table of what chainmail knows about a mail provider — its IMAP and SMTP
 * servers, the address domains it hosts, the MX hosts that mean a custom domain is hosted there. The
 * config fills an account's missing `[accounts.imap]`/`[accounts.smtp]` keys from it (an explicit key
 * wins) and `chainmail accounts probe` answers from it first. Only settings the provider documents are
 * here; each entry names the page. The providers that sign in with OAuth2 (google, microsoft) carry
 * their endpoints, scopes and client environment variables here too, next to their servers
 * (src/auth/providers.ts reads them).
 */
import type { TlsMode } from "../config.js";

/** Every `provider` value config.toml accepts; "imap" is any server, set by hand. */
export const PROVIDERS = ["imap", "google", "microsoft", "fastmail", "icloud", "yahoo"] as const;
export type Provider = (typeof PROVIDERS)[number];
export type PresetProvider = Exclude<Provider, "imap">;

export interface ServerPreset {
  host: string;
  port: number;
  tls: TlsMode;
}

/** A provider's OAuth2 sign-in: endpoints, scopes and where its client id and secret may come from. */
export interface OAuthPresetSettings {
  authorization_endpoint: string;
  token_endpoint: string;
  device_authorization_endpoint: string;
  revocation_endpoint?: string;
  scopes: string[];
  /** Environment variables holding the client id and secret (config.toml's values win). */
  env: { clientId: string; clientSecret: string };
}

export interface ProviderPreset {
  provider: PresetProvider;
  /** The provider's name for people. */
  label: string;
  imap: ServerPreset;
  smtp: ServerPreset;
  /** Address domains the provider hosts (lower case): `me@gmail.com` is a google account. */
  domains: readonly string[];
  /**
   * MX host names (lower case) that mean a domain's mail is hosted by the provider: an exact name, or
   * `.suffix` for any host under it. A custom domain on Google Workspace or Microsoft 365 is found so.
   */
  mx: readonly string[];
  /**
   * Folder names for a provider whose server does not mark its special folders (RFC 6154 SPECIAL-USE).
   * None of the providers below needs them: each marks its folders, and chainmail finds them by role.
   */
  folders?: { drafts?: string; sent?: string; trash?: string; archive?: string };
  /** What a password login needs there (an app password), said to the user by probe and docs. */
  password_note: string;
  /** The provider's page the settings come from (its title and site). */
  docs: string;
  /** OAuth2 sign-in, for providers whose servers take it (`[accounts.oauth]` overrides each key). */
  oauth?: OAuthPresetSettings;
}

export const PRESETS: Readonly<Record<PresetProvider, ProviderPreset>> = {
  // Google Help, "Read Gmail messages on other email clients using IMAP":
  // imap.gmail.com 993 SSL, smtp.gmail.com 465 SSL. Google Workspace Admin Help, "Google Workspace MX
  // records values": smtp.google.com, or the older ASPMX.L.GOOGLE.COM
  // with ALT1..ALT4.ASPMX.L.GOOGLE.COM.
  google: {
    provider: "google",
    label: "Google (Gmail, Google Workspace)",
    imap: { host: "imap.gmail.com", port: 993, tls: "tls" },
    smtp: { host: "smtp.gmail.com", port: 465, tls: "tls" },
    domains: ["gmail.com", "googlemail.com"],
    mx: ["smtp.google.com", "aspmx.l.google.com", ".aspmx.l.google.com", ".googlemail.com"],
    password_note: "an app password (2-Step Verification on), or OAuth2",
    docs: "Google Help: Read Gmail messages on other email clients using IMAP (support.google.com)",
    oauth: {
      authorization_endpoint: "https://accounts.google.com/o/oauth2/v2/auth",
      token_endpoint: "https://oauth2.googleapis.com/token",
      device_authorization_endpoint: "https://oauth2.googleapis.com/device/code",
      revocation_endpoint: "https://oauth2.googleapis.com/revoke",
      // Gmail's IMAP and SMTP accept only this full-access scope.
      scopes: ["https://mail.google.com/"],
      env: { clientId: "CHAINMAIL_GOOGLE_CLIENT_ID", clientSecret: "CHAINMAIL_GOOGLE_CLIENT_SECRET" },
    },
  },
  // Microsoft Support, "POP, IMAP, and SMTP settings for Outlook.com": IMAP outlook.office365.com 993
  // SSL/TLS. Microsoft Learn, "How to set up a multifunction device or application to send email using
  // Microsoft 365 or Office 365": SMTP smtp.office365.com 587 STARTTLS (the Outlook.com page names
  // smtp-mail.outlook.com, same port and TLS; set [accounts.smtp] host to use it). Exchange Online's MX
  // is DOMAIN.mail.protection.outlook.com (Microsoft Learn, "Add DNS records to connect your domain").
  microsoft: {
    provider: "microsoft",
    label: "Microsoft (Outlook.com, Microsoft 365)",
    imap: { host: "outlook.office365.com", port: 993, tls: "tls" },
    smtp: { host: "smtp.office365.com", port: 587, tls: "starttls" },
    domains: ["outlook.com", "hotmail.com", "live.com", "msn.com"],
    mx: [".mail.protection.outlook.com"],
    password_note: "OAuth2 (Microsoft turned off password logins for IMAP and SMTP)",
    docs: "Microsoft Support: POP, IMAP, and SMTP settings for Outlook.com (support.microsoft.com)",
    oauth: {
      // "common": work/school and personal accounts alike; a tenant id in its place limits to one tenant.
      authorization_endpoint: "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
      token_endpoint: "https://login.microsoftonline.com/common/oauth2/v2.0/token",
      device_authorization_endpoint: "https://login.microsoftonline.com/common/oauth2/v2.0/devicecode",
      // Microsoft has no RFC 7009 revocation endpoint: logout forgets the token locally.
      scopes: [
        "https://outlook.office.com/IMAP.AccessAsUser.All",
        "https://outlook.office.com/SMTP.Send",
        "offline_access",
      ],
      env: { clientId: "CHAINMAIL_MICROSOFT_CLIENT_ID", clientSecret: "CHAINMAIL_MICROSOFT_CLIENT_SECRET" },
    },
  },
  // Fastmail Help, "Server names and ports":
  // imap.fastmail.com 993 SSL, smtp.fastmail.com 465 SSL; custom domains: MX in1-smtp and
  // in2-smtp.messagingengine.com.
  fastmail: {
    provider: "fastmail",
    label: "Fastmail",
    imap: { host: "imap.fastmail.com", port: 993, tls: "tls" },
    smtp: { host: "smtp.fastmail.com", port: 465, tls: "tls" },
    domains: ["fastmail.com", "fastmail.fm"],
    mx: [".messagingengine.com"],
    password_note: "an app password (Settings → Privacy & Security → App passwords)",
    docs: "Fastmail Help: Server names and ports (fastmail.help)",
  },
  // Apple Support, "iCloud Mail server settings for other email client apps":
  // imap.mail.me.com 993 SSL, smtp.mail.me.com 587 STARTTLS; custom domains of iCloud+: MX
  // mx01.mail.icloud.com and mx02.mail.icloud.com.
  icloud: {
    provider: "icloud",
    label: "iCloud Mail",
    imap: { host: "imap.mail.me.com", port: 993, tls: "tls" },
    smtp: { host: "smtp.mail.me.com", port: 587, tls: "starttls" },
    domains: ["icloud.com", "me.com", "mac.com"],
    mx: [".mail.icloud.com"],
    password_note: "an app-specific password (account.apple.com → Sign-In and Security)",
    docs: "Apple Support: iCloud Mail server settings for other email client apps (support.apple.com)",
  },
  // Yahoo Help, "IMAP server settings for Yahoo Mail":
  // imap.mail.yahoo.com 993 SSL, smtp.mail.yahoo.com 465 SSL.
  yahoo: {
    provider: "yahoo",
    label: "Yahoo Mail",
    imap: { host: "imap.mail.yahoo.com", port: 993, tls: "tls" },
    smtp: { host: "smtp.mail.yahoo.com", port: 465, tls: "tls" },
    domains: ["yahoo.com", "ymail.com", "rocketmail.com"],
    mx: [],
    password_note: "an app password (Account security → Generate app password)",
    docs: "Yahoo Help: IMAP server settings for Yahoo Mail (help.yahoo.com)",
  },
};

export function isProvider(v: unknown): v is Provider {
  return typeof v === "string" && (PROVIDERS as readonly string[]).includes(v);
}

/** The preset of a provider; undefined for "imap". */
export function presetOf(provider: Provider): ProviderPreset | undefined {
  return provider === "imap" ? undefined : PRESETS[provider];
}

/** The preset hosting an address domain (`gmail.com`), by the table alone. */
export function presetForDomain(domain: string): ProviderPreset | undefined {
  const d = domain.toLowerCase().replace(/\.$/, "");
  return Object.values(PRESETS).find((p) => p.domains.includes(d));
}

/** The preset whose mail exchangers include this MX host (`alt1.aspmx.l.google.com.`). */
export function presetForMx(host: string): ProviderPreset | undefined {
  const h = host.toLowerCase().replace(/\.$/, "");
  return Object.values(PRESETS).find((p) =>
    p.mx.some((m) => (m.startsWith(".") ? h.endsWith(m) && h.length > m.length : h === m)),
  );
}
