import { createHmac } from "node:crypto";
import { type PublishOutcome, payloadOf, PublishError, type PublishEvent, type Publisher } from "./types.js";

export interface WebhookOptions {
  url: string;
  /** The HMAC-SHA256 key; receivers verify X-Signature-256 with it. */
  secret: string;
  /** Tries per event, the first included. Default 4. */
  maxAttempts?: number;
  /** Wait before the second try; doubled before each further one. Default 1000 ms. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Per request. Default 10 s. */
  timeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

export const SIGNATURE_HEADER = "X-Signature-256";

/** `sha256=<hex>` of the body, as X-Signature-256 carries it. */
export function signBody(body: string, secret: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

/** Network errors, timeouts, 408, 429 and 5xx may pass; any other answer will not change on retry. */
function retryable(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * POSTs the event as JSON, signed with HMAC-SHA256 over the exact body. Retries with exponential
 * backoff; throws PublishError with the last problem when every try failed.
 */
export class WebhookPublisher implements Publisher {
  readonly name = "webhook";
  private readonly o: Required<WebhookOptions>;

  constructor(options: WebhookOptions) {
    if (!/^https?:\/\//i.test(options.url))
      throw new Error(`The webhook URL must be http(s): ${options.url}`);
    if (!options.secret) throw new Error("The webhook needs a secret to sign its requests");
    this.o = {
      maxAttempts: 4,
      baseDelayMs: 1000,
      maxDelayMs: 30_000,
      timeoutMs: 10_000,
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      ...options,
    };
  }

  async publish(event: PublishEvent): Promise<PublishOutcome> {
    const payload = payloadOf(event);
    const body = JSON.stringify(payload);
    let problem = "";
    for (let attempt = 1; attempt <= this.o.maxAttempts; attempt++) {
      if (attempt > 1)
        await this.o.sleep(Math.min(this.o.baseDelayMs * 2 ** (attempt - 2), this.o.maxDelayMs));
      try {
        const res = await fetch(this.o.url, {
          method: "POST",
          headers: {
            "Content-Type": "application/json",
            "User-Agent": "notes-status-mcp",
            [SIGNATURE_HEADER]: signBody(body, this.o.secret),
            "X-Notes-Event": payload.event,
            "X-Notes-Delivery": payload.deliveryId,
          },
          body,
          signal: AbortSignal.timeout(this.o.timeoutMs),
        });
        await res.body?.cancel().catch(() => undefined);
        if (res.ok) return { attempts: attempt };
        problem = `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ""} from ${this.o.url}`;
        if (!retryable(res.status)) throw new PublishError(`${problem} (not retried)`, attempt);
      } catch (err) {
        if (err instanceof PublishError) throw err;
        const e = err as Error & { cause?: { code?: string; message?: string } };
        const why =
          e.name === "TimeoutError"
            ? "timed out"
            : e.cause
              ? `${e.message} (${e.cause.code ?? e.cause.message})`
              : e.message;
        problem = `${why} posting to ${this.o.url}`;
      }
    }
    throw new PublishError(`${problem} after ${this.o.maxAttempts} attempts`, this.o.maxAttempts);
  }
}
