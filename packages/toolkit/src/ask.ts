import { createHash, randomUUID } from "node:crypto";
import {
  type BooleanSchema,
  type ClientCapabilities,
  type InputRequest,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
  type Notification,
  type NumberSchema,
  type StringSchema,
  type TitledSingleSelectEnumSchema,
  type UntitledSingleSelectEnumSchema,
} from "@modelcontextprotocol/server";
import { ToolError } from "./errors.js";

/**
 * One field of a question's form: the flat primitives the MCP specification allows in an
 * elicitation (a string, with an optional format and length bounds; a number or integer, with
 * optional bounds; a boolean; an enum of strings, with or without a title per option). Written as
 * the specification writes them, so what the handler declares is what the client renders.
 */
export type AskField =
  | StringSchema
  | NumberSchema
  | BooleanSchema
  | (Omit<UntitledSingleSelectEnumSchema, "enum"> & { enum: readonly string[] })
  | (Omit<TitledSingleSelectEnumSchema, "oneOf"> & { oneOf: readonly { const: string; title: string }[] });

/** The value a person's accepted answer holds for one field. */
export type AskFieldValue<F> = F extends { type: "boolean" }
  ? boolean
  : F extends { type: "number" | "integer" }
    ? number
    : F extends { enum: readonly (infer E extends string)[] }
      ? E
      : F extends { oneOf: readonly { const: infer E extends string }[] }
        ? E
        : string;

/** A question with a form: a message and its fields. Every field is required. */
export interface AskForm<F extends Readonly<Record<string, AskField>> = Readonly<Record<string, AskField>>> {
  /** What the person is asked, shown by the client above the form. */
  message: string;
  fields: F;
}

/** A question that sends the person to a URL (a sign-in page, a payment, anything not to pass through the model). */
export interface AskUrl {
  url: string;
  /** Why the person should open it. */
  message: string;
}

/** "This client cannot ask": it did not declare the capability, so nothing was asked. Never consent. */
export interface Unavailable {
  action: "unavailable";
}

/** The person declined, or dismissed the question without choosing (cancel). Never consent. */
export interface NotAccepted {
  action: "decline" | "cancel";
}

/** The person accepted the form; `content` holds one value per field, checked against the form. */
export interface FormAccepted<C> {
  action: "accept";
  content: C;
  /**
   * This question's id in this call: the same every time the handler is re-entered for it, and on
   * a client's replay of the same answered request (the SDK's request state is signed and expires,
   * but is not single-use). Use it as the idempotency key of the step the answer allows.
   */
  id: string;
}

/**
 * The person agreed to open the URL (not that what happens there is finished). `complete()` tells
 * a 2025-11-25 client that the out-of-band step is done (`notifications/elicitation/complete`); on
 * 2026-07-28, which has no such notice, it does nothing.
 */
export interface UrlAccepted {
  action: "accept";
  /** As `FormAccepted.id`; on a 2025-11-25 client it is also the `elicitationId`. */
  id: string;
  complete(): Promise<void>;
}

export type FormAnswer<F extends Readonly<Record<string, AskField>>> =
  | FormAccepted<{ [K in keyof F]: AskFieldValue<F[K]> }>
  | NotAccepted
  | Unavailable;

export type UrlAnswer = UrlAccepted | NotAccepted | Unavailable;

/** The two questions a handler can put to the person (beside `ctx`, `caller` and `signal`). */
export interface Asking {
  /**
   * Asks the person a question with a form and resolves with their answer. See "Asking the person"
   * in the toolkit README for the contract: the handler may be run again from the start before
   * this resolves (on 2026-07-28 the client retries the call carrying the answer; on 2025-11-25
   * the SDK sends `elicitation/create` and re-enters the handler with the answer), so a handler
   * does nothing irreversible before it has the answer, and builds the same question each time.
   * Only `accept` is consent; `unavailable` means the client declared no form elicitation and nothing
   * was asked. The sealed state that carries the answer is not single-use: key the step the answer
   * allows by `answer.id` where the step lands.
   */
  ask<const F extends Readonly<Record<string, AskField>>>(form: AskForm<F>): Promise<FormAnswer<F>>;
  /** Asks the person to open a URL; the same contract as `ask`. */
  askUrl(question: AskUrl): Promise<UrlAnswer>;
}

/** What a transport tells one call about its client, for the call to ask through it. */
export interface AskChannel {
  /** The revision's family: "modern" is 2026-07-28 (input_required), "legacy" 2025 (elicitation/create). */
  modern: boolean;
  /** The capabilities the client declared for this request (the envelope) or connection (initialize). */
  capabilities: ClientCapabilities | undefined;
  /** The answers a retried request carries (`inputResponses`), unverified client input. */
  responses: Record<string, unknown> | undefined;
  /** The verified, decoded request state, if the request carried one. */
  state: unknown;
  /** Seals a state into the opaque string the client echoes back. */
  seal(state: AskState): Promise<string>;
  /** Sends a notification related to this call. */
  notify(notification: Notification): Promise<void>;
}

/** One question asked in a call: its hash, its id and, once given, the answer. */
interface AskedQuestion {
  q: string;
  id: string;
  answer?: StoredAnswer;
}

type StoredAnswer =
  | { action: "accept"; content?: Record<string, unknown> }
  | { action: "decline" | "cancel" };

/**
 * What travels in the SDK's request state between rounds: the call it belongs to (tool and a hash
 * of its arguments) and the questions asked so far, in order, with the answers given. Signed by
 * the SDK's codec (so the client can read it but not change it): it holds no secret.
 */
export interface AskState {
  v: 1;
  tool: string;
  args: string;
  asked: AskedQuestion[];
}

/**
 * Thrown by `ask` to unwind the handler while its question goes to the client. An Error, so a
 * handler that logs what it caught logs a sentence; the kit ends the round whatever the handler does.
 */
class AskPending extends Error {
  constructor() {
    super("the handler asked the person a question; the call resumes with the answer");
    this.name = "AskPending";
  }
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("base64url");

/** The key of the n-th question in a call's `inputRequests`. */
const keyOf = (index: number) => `q${index}`;

function formSupported(caps: ClientCapabilities | undefined): boolean {
  const e = caps?.elicitation as { form?: unknown; url?: unknown } | undefined;
  if (!e || typeof e !== "object") return false;
  // A bare `elicitation: {}` is form support, the meaning it had before modes (2025-06-18).
  return e.form !== undefined || e.url === undefined;
}

function urlSupported(caps: ClientCapabilities | undefined): boolean {
  const e = caps?.elicitation as { url?: unknown } | undefined;
  return !!e && typeof e === "object" && e.url !== undefined;
}

function isAskState(value: unknown): value is AskState {
  const s = value as Partial<AskState> | undefined;
  return (
    !!s &&
    typeof s === "object" &&
    s.v === 1 &&
    typeof s.tool === "string" &&
    typeof s.args === "string" &&
    Array.isArray(s.asked)
  );
}

/**
 * The questions of one call. Each `ask` is matched by position and by a hash of the question with
 * what the sealed state says was asked there: an answer is used only for the very question it
 * answers, in the call (tool and arguments) it was asked in. Anything else is asked afresh.
 */
export class AskSession implements Asking {
  private readonly asked: AskedQuestion[] = [];
  private readonly previous: AskedQuestion[];
  private next = 0;
  /** The question waiting for an answer once the handler unwinds. */
  pending: { index: number; request: InputRequest } | undefined;

  constructor(
    private readonly channel: AskChannel | undefined,
    private readonly call: { tool: string; args: unknown },
    private readonly validate: (schema: object, content: unknown) => string | undefined,
  ) {
    const state = channel?.state;
    this.previous =
      isAskState(state) && state.tool === call.tool && state.args === this.argsHash() ? [...state.asked] : [];
  }

  async ask<const F extends Readonly<Record<string, AskField>>>(form: AskForm<F>): Promise<FormAnswer<F>> {
    this.checkNotPending();
    if (!this.channel || !formSupported(this.channel.capabilities)) return { action: "unavailable" };
    const requestedSchema = {
      type: "object" as const,
      properties: form.fields as unknown as Record<string, StringSchema>,
      required: Object.keys(form.fields),
    };
    const params = { message: form.message, requestedSchema };
    const { index, id, answer } = this.lookup(sha256(JSON.stringify(["form", params])));
    if (!answer) this.wait(index, inputRequired.elicit(params));
    if (answer.action !== "accept") return { action: answer.action };
    const problem = this.validate(requestedSchema, answer.content);
    if (problem) {
      throw new ToolError(
        "INVALID_ARGUMENT",
        `The client's answer to "${form.message}" does not match the question's form: ${problem}`,
      );
    }
    return { action: "accept", content: answer.content as { [K in keyof F]: AskFieldValue<F[K]> }, id };
  }

  async askUrl(question: AskUrl): Promise<UrlAnswer> {
    this.checkNotPending();
    const channel = this.channel;
    if (!channel || !urlSupported(channel.capabilities)) return { action: "unavailable" };
    const params = { message: question.message, url: question.url };
    const { index, id, answer } = this.lookup(sha256(JSON.stringify(["url", params])));
    if (!answer) {
      const request = inputRequired.elicitUrl(params);
      // The 2025-11-25 shape carries an elicitationId (the SDK would mint a random one the handler
      // never sees): the question's own id, so `complete()` can name it. 2026-07-28 has none.
      if (!channel.modern) (request.params as Record<string, unknown>)["elicitationId"] = id;
      this.wait(index, request);
    }
    if (answer.action !== "accept") return { action: answer.action };
    return {
      action: "accept",
      id,
      complete: async () => {
        if (channel.modern) return;
        await channel.notify({ method: "notifications/elicitation/complete", params: { elicitationId: id } });
      },
    };
  }

  /** The `input_required` result for the question waiting, carrying the sealed state of the call. */
  async inputRequired(): Promise<InputRequiredResult> {
    const { index, request } = this.pending!;
    const requestState = await this.channel!.seal({
      v: 1,
      tool: this.call.tool,
      args: this.argsHash(),
      asked: this.asked,
    });
    return inputRequired({ inputRequests: { [keyOf(index)]: request }, requestState });
  }

  private argsHash(): string {
    return sha256(JSON.stringify(this.call.args ?? {}));
  }

  /** The n-th question: its answer from an earlier round or from this retry, or none yet. */
  private lookup(q: string): { index: number; id: string; answer: StoredAnswer | undefined } {
    const index = this.next++;
    const before = this.previous[index];
    const same = before !== undefined && before.q === q;
    const entry: AskedQuestion = same ? { ...before } : { q, id: randomUUID() };
    if (same && !entry.answer) {
      const answer = this.answerFromClient(index);
      if (answer) entry.answer = answer;
    }
    this.asked.push(entry);
    // Once one question differs from what was asked before, later answers belong to other questions.
    if (!same) this.previous.length = Math.min(this.previous.length, index);
    return { index, id: entry.id, answer: entry.answer };
  }

  private answerFromClient(index: number): StoredAnswer | undefined {
    const view = inputResponse(this.channel?.responses, keyOf(index));
    if (view.kind !== "elicit") return undefined;
    if (view.action === "accept")
      return { action: "accept", ...(view.content ? { content: view.content } : {}) };
    return { action: view.action };
  }

  private wait(index: number, request: InputRequest): never {
    this.pending = { index, request };
    throw new AskPending();
  }

  private checkNotPending(): void {
    // A handler that caught the unwinding and asked again: the first question is still the one waiting.
    if (this.pending) throw new AskPending();
  }
}

/** The answers of a call that cannot ask (`kit.callTool` without a transport). */
export const NO_ASKING: Asking = {
  ask: async () => ({ action: "unavailable" }),
  askUrl: async () => ({ action: "unavailable" }),
};
