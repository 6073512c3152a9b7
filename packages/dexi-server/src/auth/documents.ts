import { type ClientMetadata, readClientMetadata } from "./clients.js";
import { OAuthFailure } from "./errors.js";
import { readResponseText } from "../response-text.js";

export interface DocumentOptions {
  /** A document not answered within this long is a failed registration. Default 3 s. */
  timeoutMs?: number;
  /** A longer document is refused. Default 16 KiB. */
  maxBytes?: number;
  /** How long a fetched document is used before it is fetched again. Default 1 hour. */
  ttlMs?: number;
  /** Also take `http://127.0.0.1`/`localhost` ids (tests, and only tests). */
  allowLoopbackHttp?: boolean;
  now?: () => number;
  fetch?: typeof fetch;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * A host the server should never be made to fetch from for a stranger: loopback, a literal private
 * or link-local address, any IPv6 literal. (A public name that resolves inward is not caught here.)
 */
function internalHost(host: string): boolean {
  if (LOOPBACK.has(host) || host.startsWith("[") || host.endsWith(".localhost")) return true;
  const v4 = /^(\d+)\.(\d+)\.\d+\.\d+$/.exec(host);
  if (!v4) return false;
  const [a, b] = [Number(v4[1]), Number(v4[2])];
  return (
    a === 10 ||
    a === 127 ||
    a === 0 ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168)
  );
}

/**
 * Client ID metadata documents: a client whose id is an HTTPS URL publishes its metadata there, and
 * the authorization server fetches it instead of taking a registration. The document's `client_id`
 * must be that very URL. Fetched with a short timeout and a size limit, never following redirects,
 * and cached, so a slow or huge document cannot hold the consent page.
 */
export class ClientDocuments {
  private readonly cache = new Map<string, { meta: ClientMetadata; until: number }>();
  private readonly o: Required<Omit<DocumentOptions, "fetch">> & { fetch: typeof fetch };

  constructor(options: DocumentOptions = {}) {
    this.o = {
      timeoutMs: 3_000,
      maxBytes: 16 * 1024,
      ttlMs: 60 * 60_000,
      allowLoopbackHttp: false,
      now: Date.now,
      fetch: globalThis.fetch,
      ...options,
    };
  }

  /** Whether a client id names a metadata document (rather than a registered client). */
  isDocumentId(id: string): boolean {
    let url: URL;
    try {
      url = new URL(id);
    } catch {
      return false;
    }
    if (url.hash || url.username || url.password || url.pathname === "/") return false;
    if (url.protocol === "https:") return this.o.allowLoopbackHttp || !internalHost(url.hostname);
    return this.o.allowLoopbackHttp && url.protocol === "http:" && LOOPBACK.has(url.hostname);
  }

  async get(id: string): Promise<ClientMetadata> {
    const hit = this.cache.get(id);
    if (hit && hit.until > this.o.now()) return hit.meta;
    const meta = await this.fetchDocument(id);
    this.cache.set(id, { meta, until: this.o.now() + this.o.ttlMs });
    if (this.cache.size > 1_000) this.cache.delete(this.cache.keys().next().value as string);
    return meta;
  }

  private async fetchDocument(id: string): Promise<ClientMetadata> {
    const fail = (why: string) =>
      new OAuthFailure("invalid_client", `Client metadata document ${id}: ${why}`);
    let response: Response;
    try {
      response = await this.o.fetch(id, {
        redirect: "error",
        signal: AbortSignal.timeout(this.o.timeoutMs),
        headers: { accept: "application/json" },
      });
    } catch (err) {
      throw fail((err as Error).name === "TimeoutError" ? "no answer in time" : "could not be fetched");
    }
    if (!response.ok) throw fail(`answered HTTP ${response.status}`);
    const text = await readResponseText(response, this.o.maxBytes).catch(() => undefined);
    if (text === undefined) throw fail(`longer than ${this.o.maxBytes} bytes`);
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      throw fail("is not JSON");
    }
    if ((doc as { client_id?: unknown } | null)?.client_id !== id)
      throw fail("its client_id is not its own URL");
    return readClientMetadata(doc);
  }
}
