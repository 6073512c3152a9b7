import { createHash, randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { AuthService } from "../auth/service.js";
import type { Store } from "../store/index.js";

/** A free loopback port, so the issuer (which names it) is known before the bin listens. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/**
 * A bearer token of a full consent by `userId`, minted through the authorization server's own
 * registration, consent and code exchange (what the pages drive), for the server at `issuer`.
 */
export async function mintToken(store: Store, issuer: string, userId: number): Promise<string> {
  const auth = new AuthService(store.auth, { issuer, resource: `${issuer}/mcp` });
  const redirect = "http://127.0.0.1:9/cb";
  const { client_id } = (await auth.register({ client_name: "bench", redirect_uris: [redirect] })) as {
    client_id: string;
  };
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const req = await auth.checkRequest(
    new URLSearchParams({
      client_id,
      redirect_uri: redirect,
      response_type: "code",
      code_challenge: challenge,
      code_challenge_method: "S256",
    }),
  );
  const code = new URL(
    await auth.consent(req, userId, { scopes: ["notes:read", "notes:write"] }),
  ).searchParams.get("code");
  return (
    await auth.token(
      new URLSearchParams({
        grant_type: "authorization_code",
        code: code ?? "",
        client_id,
        redirect_uri: redirect,
        code_verifier: verifier,
      }),
    )
  ).access_token;
}
