import { OAuthFailure } from "./errors.js";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);
export const MAX_REDIRECT_URIS = 10;
export const MAX_CLIENT_NAME = 200;

/**
 * A redirect URI a client may register: https anywhere, http only on a loopback host (a native app's
 * local listener, RFC 8252 §7.3), or a private-use scheme such as `cursor://` or `vscode://`
 * (§7.1). Never a fragment; `javascript:`, `data:` and the like are refused.
 */
export function checkRedirectUri(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new OAuthFailure("invalid_redirect_uri", `"${text}" is not an absolute URL`);
  }
  if (url.hash !== "" || text.includes("#"))
    throw new OAuthFailure("invalid_redirect_uri", `A redirect URI has no fragment: "${text}"`);
  const scheme = url.protocol.slice(0, -1);
  if (scheme === "https") return text;
  if (scheme === "http") {
    if (LOOPBACK.has(url.hostname) || url.hostname === "::1") return text;
    throw new OAuthFailure(
      "invalid_redirect_uri",
      `An http redirect URI must be on a loopback host: "${text}"`,
    );
  }
  if (["javascript", "data", "file", "blob", "vbscript", "about", "ftp", "ws", "wss"].includes(scheme))
    throw new OAuthFailure("invalid_redirect_uri", `The scheme ${scheme}: cannot receive a redirect`);
  return text;
}

/** The client metadata a registration (or a metadata document) gives, checked. */
export interface ClientMetadata {
  name: string;
  redirectUris: string[];
}

/** Reads RFC 7591 client metadata; only public clients (no secret) using the authorization code. */
export function readClientMetadata(body: unknown): ClientMetadata {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new OAuthFailure("invalid_client_metadata", "The registration body must be a JSON object");
  const m = body as Record<string, unknown>;
  const uris = m["redirect_uris"];
  if (!Array.isArray(uris) || uris.length === 0 || !uris.every((u) => typeof u === "string"))
    throw new OAuthFailure("invalid_redirect_uri", "redirect_uris must be a non-empty list of URLs");
  if (uris.length > MAX_REDIRECT_URIS)
    throw new OAuthFailure("invalid_redirect_uri", `At most ${MAX_REDIRECT_URIS} redirect URIs`);
  const grants = m["grant_types"];
  if (grants !== undefined) {
    if (!Array.isArray(grants) || !grants.includes("authorization_code"))
      throw new OAuthFailure("invalid_client_metadata", "grant_types must include authorization_code");
    const other = grants.filter((g) => g !== "authorization_code" && g !== "refresh_token");
    if (other.length > 0)
      throw new OAuthFailure("invalid_client_metadata", `Unsupported grant types: ${other.join(", ")}`);
  }
  const responses = m["response_types"];
  if (responses !== undefined && (!Array.isArray(responses) || responses.some((r) => r !== "code")))
    throw new OAuthFailure("invalid_client_metadata", 'response_types may only hold "code"');
  const rawName = typeof m["client_name"] === "string" ? m["client_name"].trim() : "";
  // A name is shown on the consent page: control characters never reach it.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
  const name = rawName.replace(/[\u0000-\u001f\u007f]/g, "").slice(0, MAX_CLIENT_NAME);
  return { name: name || "Unnamed app", redirectUris: (uris as string[]).map(checkRedirectUri) };
}
