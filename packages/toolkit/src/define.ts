import type { z } from "zod";
import type { Asking } from "./ask.js";

/** The four MCP hints. The kit always emits all four, since clients read a missing hint as its default. */
export interface Annotations {
  readOnly: boolean;
  destructive: boolean;
  idempotent: boolean;
  openWorld: boolean;
}

export type Shape = z.ZodRawShape;

/** Who is calling: granted scopes and whatever the transport knows of the caller. */
export interface Caller {
  scopes: readonly string[];
  /** A stable id of the authenticated client or user, when the transport has one. */
  clientId?: string;
  /** Transport-specific facts (an HTTP token's extra claims, stdio flags). */
  extra?: Readonly<Record<string, unknown>>;
}

/**
 * What a handler gets beside its input. `ask` and `askUrl` put a question to the person through
 * the client (see `Asking`): a handler that asks may be run again from the start with the answer,
 * so it does nothing irreversible before it has the answer.
 */
export interface CallInfo<Ctx> extends Asking {
  /** The server's per-call context (a domain facade, the viewer), built by the server's `context`. */
  ctx: Ctx;
  caller: Caller;
  signal: AbortSignal;
  /**
   * Runs `fn` once this call's result has been handed to the transport (for stdio, written to
   * stdout), and only then: never when the call was cancelled, ended as an error (thrown, or a
   * result its output schema refuses), or the transport failed to send it. For work that must not
   * happen unless the caller got the result, such as acknowledging what it returned. `callTool`
   * without a transport runs it as it returns.
   */
  afterResult: (fn: () => void | Promise<void>) => void;
}

/**
 * One tool, declared once. `State` is the server's gate state (what `visibleWhen` and
 * `liveAnnotations` read); servers without gating use the default `undefined`.
 */
export interface ToolDefinition<
  I extends Shape = Shape,
  O extends Shape = Shape,
  Ctx = unknown,
  State = unknown,
> {
  name: string;
  title: string;
  group: string;
  description: string;
  /** The scope a caller needs, or null for a tool any caller may use. */
  scope: string | null;
  input: I;
  output: O;
  annotations: Annotations;
  /** One line describing a result, for the text block and logs. */
  summary: (result: z.output<z.ZodObject<O>>, input: z.output<z.ZodObject<I>>) => string;
  handler: (
    input: z.output<z.ZodObject<I>>,
    call: CallInfo<Ctx>,
  ) => z.output<z.ZodObject<O>> | Promise<z.output<z.ZodObject<O>>>;
  /** Listed (and callable) only while this holds for the current gate state. */
  visibleWhen?: (state: State) => boolean;
  /** Annotations that depend on the gate state; merged over `annotations`. */
  liveAnnotations?: (state: State) => Partial<Annotations>;
  /**
   * When each live annotation holds, in words (`{ destructive: "while the policy allows expunge on
   * some account" }`): `tools/list` carries it in the tool's `_meta` (ANNOTATION_CONDITIONS_META_KEY),
   * so a reference page states the condition instead of the value one moment's gate gave.
   */
  annotationConditions?: Partial<Record<keyof Annotations, string>>;
}

// biome-ignore lint/suspicious/noExplicitAny: a heterogeneous list of tools needs erased shapes
export type AnyTool<Ctx = any, State = any> = ToolDefinition<any, any, Ctx, State>;

/** What every declaration of one file shares: its group and, unless a tool says otherwise, its scope. */
export interface ToolDefaults {
  group: string;
  scope: string | null;
}

type Declared<I extends Shape, O extends Shape, Ctx, State> = ToolDefinition<I, O, Ctx, State>;
type WithDefaults<I extends Shape, O extends Shape, Ctx, State> = Omit<
  Declared<I, O, Ctx, State>,
  "group" | "scope"
> &
  Partial<Pick<Declared<I, O, Ctx, State>, "group" | "scope">>;

/**
 * Returns a `defineTool` bound to a server's context and state types, so every declaration
 * type-checks its handler against the same context without repeating generics. With `defaults`, a
 * file states its group and scope once and its declarations leave them out (or override the scope).
 */
export function toolFactory<Ctx, State = undefined>(): <I extends Shape, O extends Shape>(
  def: Declared<I, O, Ctx, State>,
) => Declared<I, O, Ctx, State>;
export function toolFactory<Ctx, State = undefined>(
  defaults: ToolDefaults,
): <I extends Shape, O extends Shape>(def: WithDefaults<I, O, Ctx, State>) => Declared<I, O, Ctx, State>;
export function toolFactory<Ctx, State = undefined>(defaults?: ToolDefaults) {
  return function defineTool<I extends Shape, O extends Shape>(
    def: WithDefaults<I, O, Ctx, State>,
  ): Declared<I, O, Ctx, State> {
    const group = def.group ?? defaults?.group;
    const scope = def.scope !== undefined ? def.scope : defaults?.scope;
    if (group === undefined || scope === undefined) {
      throw new Error(`Tool "${def.name}" needs a group and a scope (or a toolFactory with defaults)`);
    }
    return { ...def, group, scope };
  };
}
