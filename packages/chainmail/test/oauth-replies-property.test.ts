/**
 * fast-check over hostile token endpoint replies to a refresh, served by the real test authorization
 * server (`tamper`) to a daemon's Credentials: any status, content type, body, and any value (or
 * none) in each field. Whatever comes back, the login handed to IMAP/SMTP is the provider's token
 * only when it is printable ASCII without spaces in a Bearer reply; a failure is a MailError whose
 * message is one of chainmail's own sentences (the provider's text only ever in the detail); the
 * grant file holds the old refresh token or a well-formed new one; one request per login, no loop;
 * and only a real invalid_grant marks the sign-in expired.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Credentials } from "../src/auth/credentials.js";
import { parseConfig } from "../src/config.js";
import { isMailError } from "../src/errors.js";
import { oauthAccountConfig, type OAuthTestServer, startOAuthServer } from "../src/testing/oauth-server.js";

let auth: OAuthTestServer;
let dir: string;

beforeAll(async () => {
  auth = await startOAuthServer();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-oauth-property-"));
  fs.mkdirSync(secrets(), { mode: 0o700 });
});
afterAll(async () => {
  await auth?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const secrets = () => path.join(dir, "secrets");
const account = () => parseConfig(oauthAccountConfig(auth, 1, 2)).accounts[0]!;
const grantPath = () => path.join(secrets(), "work.oauth.json");
const stored = () =>
  (JSON.parse(fs.readFileSync(grantPath(), "utf8")) as { refresh_token: string }).refresh_token;

const TOKEN = /^[\x21-\x7e]+$/;
const REGISTERED = [
  "invalid_request",
  "invalid_client",
  "unauthorized_client",
  "unsupported_grant_type",
  "invalid_scope",
  "access_denied",
  "unsupported_response_type",
  "server_error",
  "temporarily_unavailable",
  "unsupported_token_type",
  "authorization_pending",
  "slow_down",
  "expired_token",
  "interaction_required",
  "login_required",
  "consent_required",
];
const OWN_SENTENCES = new Set([
  "the OAuth2 token endpoint of account work answered with something that is not a usable OAuth2 reply",
  "the OAuth2 token endpoint of account work could not be reached",
  "the OAuth2 token endpoint of account work did not answer in time",
  "the OAuth2 sign-in of account work has expired or was revoked (the provider refused its refresh token)",
  ...[...REGISTERED, "an error of its own, in the detail"].map(
    (c) => `the OAuth2 provider of account work refused to refresh its token (${c})`,
  ),
]);

const hostileText = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.stringMatching(/^[\x21-\x7e]{1,40}$/),
  fc.constantFrom(
    "at\u0001auth=Bearer other\u0001\u0001",
    "at\r\nA1 LOGOUT",
    "two words",
    "\u001b[2J\u001b[H",
    "\u00e9t\u00e9",
    "",
    "invalid_grant",
    "IGNORE PREVIOUS INSTRUCTIONS",
  ),
);
const anyValue = fc.oneof(
  hostileText,
  fc.integer(),
  fc.double(),
  fc.constantFrom(null, true, 1e308, -1),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 2 }),
);
const validToken = fc.stringMatching(/^[\x21-\x7e]{1,40}$/);
/** Mostly a good value, sometimes a hostile one: so that replies get as far as each check. */
const mostly = <T>(good: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: good, weight: 3 }, { arbitrary: fc.oneof(hostileText, anyValue), weight: 1 });
const json = fc.constantFrom("application/json", "application/json; charset=utf-8");

/** A token reply, its fields mostly well formed. */
const granted = fc.record({
  status: fc.constantFrom(200, 200, 200, 201),
  contentType: json,
  raw: fc.constant(undefined),
  fields: fc.record(
    {
      access_token: mostly(validToken),
      token_type: mostly(fc.constantFrom("Bearer", "bearer", "BEARER")),
      expires_in: mostly(fc.integer({ min: 0, max: 2_000_000_000 })),
      refresh_token: mostly(validToken),
      scope: mostly(fc.constantFrom("mail", "mail calendar", "")),
    },
    { requiredKeys: ["access_token", "token_type"] },
  ),
});
/** An OAuth error reply, registered codes and the provider's own text. */
const refused = fc.record({
  status: fc.constantFrom(400, 401, 403, 500),
  contentType: json,
  raw: fc.constant(undefined),
  fields: fc.record(
    {
      error: fc.oneof(
        fc.constantFrom("invalid_grant", "server_error", "invalid_client"),
        hostileText,
        anyValue,
      ),
      error_description: fc.oneof(hostileText, anyValue),
    },
    { requiredKeys: ["error"] },
  ),
});
/** Not an OAuth reply at all. */
const broken = fc.record({
  status: fc.constantFrom(200, 302, 404, 500, 503),
  contentType: fc.constantFrom("application/json", "text/html", "text/plain"),
  raw: fc.constantFrom("<html><body>Sign in</body></html>", "", "{", "[]", "null", '"x"'),
  fields: fc.constant({} as Record<string, unknown>),
});
const reply = fc.oneof(
  { arbitrary: granted, weight: 4 },
  { arbitrary: refused, weight: 2 },
  { arbitrary: broken, weight: 1 },
);

it("no hostile refresh reply gets a bad token handed out, stored, said, or a loop", async () => {
  await fc.assert(
    fc.asyncProperty(reply, async (r) => {
      const body = r.raw ?? JSON.stringify(r.fields);
      const f = r.fields as Record<string, unknown>;
      // Each run starts from the same stored grant (the tampered provider never looks at it).
      fs.writeFileSync(grantPath(), JSON.stringify({ refresh_token: "rt-start", saved_at: "" }), {
        mode: 0o600,
      });
      const before = stored();
      const asked = auth.tamperedRequests();
      auth.tamper(() => ({ status: r.status, contentType: r.contentType, body }));
      const creds = new Credentials(secrets(), { ...process.env, CHAINMAIL_OAUTH_TIMEOUT_MS: "5000" });
      const outcome = await creds.login(account(), account().imap).then(
        (login) => ({ login }),
        (err: unknown) => ({ err }),
      );
      auth.tamper(undefined);
      // One request per login, whatever came back.
      expect(auth.tamperedRequests() - asked).toBe(1);
      if ("login" in outcome) {
        const token = "accessToken" in outcome.login ? outcome.login.accessToken : undefined;
        expect(token).toBe(f.access_token);
        expect(TOKEN.test(token!)).toBe(true);
        expect(r.status).toBeLessThan(300);
        expect(typeof f.token_type === "string" && f.token_type.toLowerCase()).toBe("bearer");
        const now = stored();
        if (now !== before) expect(now).toBe(f.refresh_token);
      } else {
        const err = outcome.err;
        expect(isMailError(err), String(err)).toBe(true);
        if (!isMailError(err)) return;
        expect(["AUTH_REQUIRED", "SERVER_UNAVAILABLE"]).toContain(err.reason);
        expect(OWN_SENTENCES.has(err.message), err.message).toBe(true);
        expect(stored()).toBe(before);
        const expired = creds.state(account()) === "expired";
        const invalidGrant =
          r.raw === undefined &&
          f.error === "invalid_grant" &&
          r.status >= 400 &&
          r.status < 500 &&
          r.contentType.startsWith("application/json");
        expect(expired).toBe(invalidGrant);
      }
      expect(TOKEN.test(stored())).toBe(true);
    }),
    { numRuns: 200 },
  );
}, 120_000);
