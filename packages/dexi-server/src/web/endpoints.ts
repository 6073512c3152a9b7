/** The OAuth endpoints machines talk to: metadata, registration, token, revocation. */
import { OAuthFailure } from "../auth/errors.js";
import type { AuthService } from "../auth/service.js";
import { NOTES_SCOPES } from "../domain/limits.js";
import { json, readForm, readJson } from "./http.js";

export const PATHS = {
  authorize: "/authorize",
  token: "/token",
  register: "/register",
  revoke: "/revoke",
  asMetadata: "/.well-known/oauth-authorization-server",
  prmRoot: "/.well-known/oauth-protected-resource",
} as const;

/** RFC 8414 metadata of the authorization server. */
export function authorizationServerMetadata(auth: AuthService, documents: boolean): Record<string, unknown> {
  const at = (p: string) => `${auth.issuer}${p}`;
  return {
    issuer: auth.issuer,
    authorization_endpoint: at(PATHS.authorize),
    token_endpoint: at(PATHS.token),
    registration_endpoint: at(PATHS.register),
    revocation_endpoint: at(PATHS.revoke),
    scopes_supported: [...NOTES_SCOPES],
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    token_endpoint_auth_methods_supported: ["none"],
    revocation_endpoint_auth_methods_supported: ["none"],
    code_challenge_methods_supported: ["S256"],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: documents,
  };
}

/** RFC 9728 metadata of the MCP endpoint as a protected resource. */
export function protectedResourceMetadata(auth: AuthService): Record<string, unknown> {
  return {
    resource: auth.resource,
    authorization_servers: [auth.issuer],
    scopes_supported: [...NOTES_SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: "Dexi notes",
  };
}

/** The metadata URL a 401 names: the resource's path appended to the well-known prefix (RFC 9728 §3.1). */
export function resourceMetadataUrl(auth: AuthService): string {
  return `${auth.issuer}${PATHS.prmRoot}${new URL(auth.resource).pathname}`;
}

const failure = (err: unknown): Response => {
  if (err instanceof OAuthFailure) {
    const extra: Record<string, string> = err.status === 401 ? { "www-authenticate": "Basic" } : {};
    return json(err.status, err.toJSON(), extra);
  }
  throw err;
};

/** Answers a machine endpoint, or undefined when the path is not one. */
export async function endpoint(
  request: Request,
  path: string,
  auth: AuthService,
  documents: boolean,
): Promise<Response | undefined> {
  const prm = resourceMetadataUrl(auth);
  if (request.method === "GET" && path === PATHS.asMetadata)
    return json(200, authorizationServerMetadata(auth, documents));
  if (request.method === "GET" && (path === PATHS.prmRoot || `${auth.issuer}${path}` === prm))
    return json(200, protectedResourceMetadata(auth));
  if (path !== PATHS.token && path !== PATHS.register && path !== PATHS.revoke) return undefined;
  if (request.method !== "POST")
    return json(405, { error: "invalid_request", error_description: "Use POST" });
  try {
    if (path === PATHS.register) {
      const body = await readJson(request);
      return json(201, await auth.register(body));
    }
    const form = await readForm(request);
    if (!form)
      throw new OAuthFailure(
        "invalid_request",
        "Send an application/x-www-form-urlencoded body (at most 64 KiB)",
      );
    if (path === PATHS.token) return json(200, await auth.token(form));
    await auth.revoke(form);
    return new Response(null, { status: 200, headers: { "cache-control": "no-store" } });
  } catch (err) {
    return failure(err);
  }
}
