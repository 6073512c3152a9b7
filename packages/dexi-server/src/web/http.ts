/** Small HTTP answers shared by the OAuth endpoints and the pages. */
import { readBodyText } from "@mcpforge/toolkit";

export const MAX_FORM_BYTES = 64 * 1024;

/** Headers every page carries: no script, no framing, nothing from elsewhere, nothing cached. */
export function pageHeaders(formTargets: string[] = []): Record<string, string> {
  const formAction = ["'self'", ...formTargets].join(" ");
  return {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": `default-src 'none'; style-src 'self'; img-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    // same-origin, not no-referrer: under no-referrer a form post carries `Origin: null`, which the
    // DNS-rebinding check refuses; nothing leaks to other sites either way.
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
  };
}

export function html(
  status: number,
  body: string,
  extra: Record<string, string> = {},
  formTargets?: string[],
) {
  return new Response(body, { status, headers: { ...pageHeaders(formTargets), ...extra } });
}

export function json(status: number, body: unknown, extra: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store", ...extra },
  });
}

export function seeOther(location: string, extra: Record<string, string> = {}): Response {
  return new Response(null, { status: 303, headers: { location, "cache-control": "no-store", ...extra } });
}

/** A urlencoded form body, bounded; undefined when it is too large or not a form. */
export async function readForm(request: Request): Promise<URLSearchParams | undefined> {
  const type = request.headers.get("content-type") ?? "";
  if (!type.startsWith("application/x-www-form-urlencoded")) return undefined;
  const text = await readBodyText(request, MAX_FORM_BYTES);
  return text === undefined ? undefined : new URLSearchParams(text);
}

/** A JSON body, bounded; undefined when it is too large or not JSON. */
export async function readJson(request: Request): Promise<unknown> {
  const text = await readBodyText(request, MAX_FORM_BYTES);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Where a form may send the browser on: a path of this server, never another origin. */
export function localPath(next: string | null, fallback: string): string {
  return next && /^\/(?![/\\])/.test(next) ? next : fallback;
}
