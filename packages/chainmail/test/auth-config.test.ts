/** `[accounts.oauth]` in config.toml: presets, overrides, and what is refused. */
import { describe, expect, it } from "vitest";
import { oauthClient } from "../src/auth/oauth.js";
import { OAUTH_PRESETS } from "../src/auth/providers.js";
import { changedConnections, parseConfig } from "../src/config.js";
import { isMailError } from "../src/errors.js";
import { diffEndpoint, endpointOf, sameEndpoint, withEndpoint } from "../src/policy/endpoints.js";

const account = (provider: string, oauth: string, imap = 'host = "imap.example.com"') => `
[[accounts]]
name = "a"
provider = "${provider}"
address = "me@example.com"
[accounts.imap]
${imap}
[accounts.oauth]
${oauth}
`;

function problems(text: string): string {
  try {
    parseConfig(text);
  } catch (err) {
    if (isMailError(err) && err.reason === "CONFIG_INVALID") return err.message;
    throw err;
  }
  return "";
}

describe("[accounts.oauth]", () => {
  it.each([
    ["google", "https://oauth2.googleapis.com/token", ["https://mail.google.com/"]],
    [
      "microsoft",
      "https://login.microsoftonline.com/common/oauth2/v2.0/token",
      [
        "https://outlook.office.com/IMAP.AccessAsUser.All",
        "https://outlook.office.com/SMTP.Send",
        "offline_access",
      ],
    ],
  ])("the %s preset fills the endpoints and scopes", (provider, token, scopes) => {
    const c = parseConfig(account(provider, 'client_id = "id"'));
    const o = c.accounts[0]!.oauth!;
    expect(o.preset).toBe(provider);
    expect(o.token_endpoint).toBe(token);
    expect(o.scopes).toEqual(scopes);
    expect(o.device_authorization_endpoint).toBe(
      OAUTH_PRESETS[provider as "google"].device_authorization_endpoint,
    );
  });

  it("an explicit key wins over the preset", () => {
    const c = parseConfig(
      account("microsoft", 'token_endpoint = "https://login.example.com/t"\nscopes = ["x"]'),
    );
    expect(c.accounts[0]!.oauth).toMatchObject({
      token_endpoint: "https://login.example.com/t",
      scopes: ["x"],
    });
  });

  it("provider imap needs its endpoints and scopes", () => {
    const m = problems(account("imap", 'client_id = "id"'));
    expect(m).toContain("accounts[0].oauth.token_endpoint is required");
    expect(m).toContain("accounts[0].oauth needs authorization_endpoint or device_authorization_endpoint");
    expect(m).toContain("accounts[0].oauth.scopes is required");
  });

  it("refuses unknown keys, http:// off loopback and other schemes", () => {
    expect(problems(account("google", 'client_idd = "x"'))).toContain(
      "accounts[0].oauth.client_idd is not a known setting",
    );
    expect(problems(account("google", 'token_endpoint = "http://auth.example.com/token"'))).toContain(
      "accounts[0].oauth.token_endpoint may use http:// only on a loopback host",
    );
    expect(problems(account("google", 'token_endpoint = "ftp://auth.example.com/token"'))).toContain(
      "must be an https:// URL",
    );
    expect(problems(account("google", 'token_endpoint = "http://127.0.0.1:8080/token"'))).toBe("");
  });

  it("refuses a token over a connection without TLS, except to a loopback host", () => {
    expect(problems(account("google", "", 'host = "imap.example.com"\ntls = "none"'))).toContain(
      'accounts[0].imap.tls = "none" sends the OAuth2 token without TLS',
    );
    expect(problems(account("google", "", 'host = "127.0.0.1"\ntls = "none"'))).toBe("");
  });

  it("takes the client id and secret from the environment when config.toml has none", () => {
    const a = parseConfig(account("google", "")).accounts[0]!;
    const c = oauthClient(a, { CHAINMAIL_GOOGLE_CLIENT_ID: "env-id", CHAINMAIL_GOOGLE_CLIENT_SECRET: "s" });
    expect(c.client.client_id).toBe("env-id");
    const err = (() => {
      try {
        oauthClient(a, {});
      } catch (e) {
        return e;
      }
    })();
    expect(isMailError(err) && err.hint).toContain("CHAINMAIL_GOOGLE_CLIENT_ID");
    const own = parseConfig(account("google", 'client_id = "cfg-id"')).accounts[0]!;
    expect(oauthClient(own, { CHAINMAIL_GOOGLE_CLIENT_ID: "env-id" }).client.client_id).toBe("cfg-id");
  });
});

describe("where secrets go waits for the owner (the account's endpoint)", () => {
  const withOauth = (token: string) =>
    parseConfig(account("google", `client_id = "id"\ntoken_endpoint = "${token}"`)).accounts[0]!;

  it("an account without OAuth2 or password_command keeps the endpoint it had before", () => {
    const a = parseConfig(
      account(
        "imap",
        'client_id = "x"\ntoken_endpoint = "https://t.example/t"\nauthorization_endpoint = "https://t.example/a"\nscopes = ["s"]',
      ),
    ).accounts[0]!;
    const { oauth: _o, ...plain } = a;
    expect(Object.keys(endpointOf(plain))).toEqual(["provider", "username", "imap", "smtp"]);
  });

  it("a new token endpoint is a change; until confirmed the account uses the confirmed one", () => {
    const confirmed = endpointOf(withOauth("https://oauth2.googleapis.com/token"));
    const file = withOauth("https://evil.example/token");
    expect(sameEndpoint(confirmed, endpointOf(file))).toBe(false);
    expect(diffEndpoint(confirmed, endpointOf(file))).toEqual([
      "oauth.token_endpoint https://oauth2.googleapis.com/token → https://evil.example/token",
    ]);
    expect(withEndpoint(file, confirmed).oauth?.token_endpoint).toBe("https://oauth2.googleapis.com/token");
  });

  it("a password_command not confirmed is not run: the account has none", () => {
    const text = (cmd: string) =>
      `[[accounts]]\nname = "a"\naddress = "a@b.c"\n${cmd}\n[accounts.imap]\nhost = "h"\n`;
    const before = parseConfig(text("")).accounts[0]!;
    const after = parseConfig(text('password_command = "evil --now"')).accounts[0]!;
    expect(diffEndpoint(endpointOf(before), endpointOf(after))).toEqual([
      'password_command none → ["evil","--now"]',
    ]);
    expect(withEndpoint(after, endpointOf(before)).password_command).toBeUndefined();
  });
});

describe("a config edit of [accounts.oauth]", () => {
  const withOauth = (oauth: string) => parseConfig(account("microsoft", oauth));
  const base = 'client_id = "one"';
  it.each([
    ["another client_id", 'client_id = "two"'],
    ["a client_secret", 'client_id = "one"\nclient_secret = "s"'],
    ["other scopes", 'client_id = "one"\nscopes = ["https://outlook.office.com/IMAP.AccessAsUser.All"]'],
    ["another token endpoint", 'client_id = "one"\ntoken_endpoint = "https://login.example.com/t"'],
  ])("%s gives the account a new connection (its token came from the old client)", (_, edited) => {
    expect(changedConnections(withOauth(base), withOauth(edited))).toEqual(["a"]);
  });
  it("another authorization endpoint (used only at sign-in) keeps the connection", () => {
    const edited = `${base}\nauthorization_endpoint = "https://login.example.com/a"`;
    expect(changedConnections(withOauth(base), withOauth(edited))).toEqual([]);
    expect(changedConnections(withOauth(base), withOauth(base))).toEqual([]);
  });
});
