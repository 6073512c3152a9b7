import {
  type AuthInfo,
  CLIENT_CAPABILITIES_META_KEY,
  type CallToolResult,
  type ClientCapabilities,
  createRequestStateCodec,
  type InputRequiredResult,
  type JSONRPCMessage,
  type JSONRPCRequest,
  ProtocolError,
  ProtocolErrorCode,
  type RequestId,
  type Result,
  Server,
  type ServerContext,
  type Tool,
  type Transport,
  type TransportSendOptions,
} from "@modelcontextprotocol/server";
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import type { Ajv, ValidateFunction } from "ajv";
import type addFormats from "ajv-formats";
import type { z } from "zod";
import { type AskChannel, AskSession, type AskState, NO_ASKING } from "./ask.js";
import type { Annotations, AnyTool, Caller } from "./define.js";
import { type Reasons, ToolError } from "./errors.js";
import { invalidParamsOf } from "./jsonrpc.js";
import { errorResult, successResult, type TextMode, toErrorBody } from "./result.js";
import { type CompiledSchemas, compileSchemas, parseInput } from "./schema.js";

/** The `_meta` key under which each tool's group travels in tools/list. */
export const GROUP_META_KEY = "io.mcpforge/group";
/** The `_meta` key under which each tool's required scope travels (absent when it needs none). */
export const SCOPE_META_KEY = "io.mcpforge/scope";
/** `_meta` key of a tool's live annotations' conditions: the MCP hint name → when it holds. */
export const ANNOTATION_CONDITIONS_META_KEY = "io.mcpforge/annotation-conditions";

const HINT_NAMES = {
  readOnly: "readOnlyHint",
  destructive: "destructiveHint",
  idempotent: "idempotentHint",
  openWorld: "openWorldHint",
} as const;

export interface GateOptions<State> {
  /** Reads the state that decides which tools are listed and their live annotations. */
  load: () => Promise<State>;
  /** A tools/list re-checks the state once the last check is this old. */
  maxAgeMs: number;
  /** The state before the first load. */
  initial: State;
  /** A load that takes longer counts as failed (the previous state stays), so tools/list never hangs. Default 10 s. */
  timeoutMs?: number;
}

export interface ServerDefinition<Ctx, State = undefined> {
  name: string;
  version: string;
  instructions?: string;
  tools: readonly AnyTool<Ctx, State>[];
  reasons: Reasons;
  /** Default "summary+json". */
  textMode?: TextMode;
  /** Check each result against its output schema (an invalid one becomes INTERNAL). Default true. */
  validateOutput?: boolean;
  /**
   * Whether tools/list carries each tool's `outputSchema`. Default true for a server built here (a
   * test or an embedding sees the whole contract); `runServer`, which every bin starts through,
   * sets it from `--output-schemas` / `MCP_OUTPUT_SCHEMAS`, so a run leaves them out unless asked
   * (`listOutputSchemas`). Results are validated against the full schema either way.
   */
  outputSchemas?: boolean;
  /** Builds the per-call context from who is calling. */
  context: (caller: Caller) => Ctx | Promise<Ctx>;
  gate?: GateOptions<State>;
  /** Injectable clock (ms) for the gate's age check. */
  now?: () => number;
  /** Where diagnostics go; default stderr (stdout belongs to the stdio transport). */
  log?: (line: string) => void;
  /** How the state of a call that asks the person travels between rounds (see `AskStateOptions`). */
  askState?: AskStateOptions;
}

/** The environment variable every instance of a server reads its request-state key from. */
export const REQUEST_STATE_KEY_ENV = "MCPFORGE_REQUEST_STATE_KEY";

/**
 * A call that asks the person (`ask`, `askUrl`) carries what it needs to resume in the SDK's
 * request state, sealed with the SDK's HMAC codec (`createRequestStateCodec`): the client can read
 * it but not change it, and it expires. Every instance that may receive the retry must hold the
 * same key: two 2026-07-28 instances behind a load balancer share it through `MCPFORGE_REQUEST_STATE_KEY`.
 */
export interface AskStateOptions {
  /**
   * The HMAC key, at least 32 bytes. Default: `MCPFORGE_REQUEST_STATE_KEY` from the environment,
   * else 32 random bytes per process (fine for stdio and for one HTTP instance).
   */
  key?: string | Uint8Array;
  /** How long the person has to answer, in seconds. Default 1800 (30 minutes). */
  ttlSeconds?: number;
}

const DEFAULT_ASK_TTL_SECONDS = 1800;

interface CompiledTool<Ctx, State> {
  def: AnyTool<Ctx, State>;
  schemas: CompiledSchemas;
  /** Compiled on the first call that needs it: compiling every tool's validator up front cost ~40 ms of start-up. */
  validateResult: () => ValidateFunction;
}

const stderrLog = (line: string) => process.stderr.write(`${line}\n`);

type Handler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

/** The SDK's multi-round-trip seam, which its `Server` runs tools/call through (not in its types). */
interface InputRequiredSeam {
  _invokeInputRequiredCapableHandler(
    method: string,
    handler: Handler,
    request: JSONRPCRequest,
    ctx: ServerContext,
  ): Promise<Result>;
}

/**
 * Whether tools/call goes through the SDK's own result check (see `KitProtocolServer`). Off in
 * service; the tests turn it on to show that the bytes on the wire are the same either way.
 */
export const sdkToolResultCheck = { on: false };

/**
 * The SDK's `Server`, but a request its wire schema refuses gets -32602 with one line (see
 * `invalidParamsOf`) instead of -32603 or -32602 with the schema's issue dump: `_wrapHandler` is
 * the SDK's hook around every request handler, its schema check included.
 *
 * For tools/call the SDK's `Server` wraps the handler to check the request a second time (the
 * handler `setRequestHandler` stores has checked it against the same wire schema already) and the
 * result against CallToolResultSchema with zod, whose parse copies the result and costs the MCP
 * process ~0.12 ms of CPU per search call (src/bench/hop-bench.ts in chainmail). The kit builds
 * every tools/call result itself: `successResult` (one text block and the structured content,
 * which `validateOutput` has checked against the tool's output schema), `errorResult`, or the
 * asking seam's input_required, which the SDK returned unchecked anyway. So the kit runs the
 * handler through the SDK's seam without the second check; test/wire-bytes.test.ts shows each kind
 * of result reaches the wire byte for byte as the SDK's checked copy did, in both eras.
 */
class KitProtocolServer extends Server {
  protected override _wrapHandler(method: string, handler: Handler): Handler {
    // An SDK without the seam (renamed in an upgrade) gets its own wrapper back: slower, not wrong.
    const seam = typeof (this as unknown as Partial<InputRequiredSeam>)._invokeInputRequiredCapableHandler;
    const wrapped =
      method === "tools/call" && !sdkToolResultCheck.on && seam === "function"
        ? (request: JSONRPCRequest, ctx: ServerContext) =>
            (this as unknown as InputRequiredSeam)._invokeInputRequiredCapableHandler(
              method,
              handler,
              request,
              ctx,
            )
        : super._wrapHandler(method, handler);
    return async (request, ctx) => {
      try {
        return await wrapped(request, ctx);
      } catch (err) {
        throw invalidParamsOf(err) ?? err;
      }
    };
  }
}

/**
 * A server built from tool declarations. One instance serves any number of connections and requests
 * (stdio, HTTP in either protocol era, in-memory test pairs); each gets its own SDK `Server`
 * (`protocolInstance`) over the same compiled tools and gate state.
 */
export class KitServer<Ctx, State = undefined> {
  readonly name: string;
  readonly version: string;
  private readonly tools: Map<string, CompiledTool<Ctx, State>>;
  private readonly def: ServerDefinition<Ctx, State>;
  private readonly textMode: TextMode;
  private readonly validateOutput: boolean;
  private readonly log: (line: string) => void;
  private readonly now: () => number;
  /** Connections that hear list changes as the 2025 era does (notifications/tools/list_changed). */
  private readonly listeners = new Set<Server>();
  private readonly changeListeners = new Set<() => void | Promise<void>>();
  private state: State;
  private lastCheck = Number.NEGATIVE_INFINITY;
  private refreshing: Promise<boolean> | undefined;
  private snapshot: string;
  /** The tools this run serves (`restrictTools`); a tool it refuses is neither listed nor callable. */
  private selected: ((def: AnyTool<Ctx, State>, annotations: Annotations) => boolean) | undefined;
  /** Whether tools/list carries the output schemas (`listOutputSchemas`). */
  private outputSchemas: boolean;
  private readonly askCodec: ReturnType<typeof createRequestStateCodec<AskState>>;
  private readonly askTtlSeconds: number;

  constructor(def: ServerDefinition<Ctx, State>) {
    this.def = def;
    this.name = def.name;
    this.version = def.version;
    this.textMode = def.textMode ?? "summary+json";
    this.validateOutput = def.validateOutput ?? true;
    this.outputSchemas = def.outputSchemas ?? true;
    this.log = def.log ?? stderrLog;
    this.now = def.now ?? Date.now;
    this.state = def.gate ? def.gate.initial : (undefined as State);
    this.tools = compileAll(def.tools);
    this.snapshot = this.snapshotOf(this.listTools());
    this.askTtlSeconds = def.askState?.ttlSeconds ?? DEFAULT_ASK_TTL_SECONDS;
    const key = def.askState?.key ?? process.env[REQUEST_STATE_KEY_ENV] ?? randomBytes(32);
    if ((typeof key === "string" ? Buffer.byteLength(key) : key.byteLength) < 32) {
      throw new Error(
        `The request-state key (askState.key or ${REQUEST_STATE_KEY_ENV}) must be at least 32 bytes`,
      );
    }
    this.askCodec = createRequestStateCodec<AskState>({
      key,
      ttlSeconds: this.askTtlSeconds,
      // A state is good only for the method and the token's client it was minted for.
      bind: (ctx) => `${ctx.mcpReq.method}\0${ctx.http?.authInfo?.clientId ?? ""}`,
    });
  }

  /** The tools visible in the current state, sorted by name, exactly as tools/list sends them. */
  listTools(): Tool[] {
    const out: Tool[] = [];
    for (const tool of this.tools.values()) {
      if (!this.isVisible(tool.def)) continue;
      out.push(this.describe(tool));
    }
    return out;
  }

  /** Every declared tool, listed or not, sorted by name. */
  declarations(): AnyTool<Ctx, State>[] {
    return [...this.tools.values()].map((t) => t.def);
  }

  /**
   * Serves only the tools `keep` accepts (given each tool's current annotations), within what the
   * gate lists: the others are not listed and a call to one is answered as an unknown tool's.
   * For a run's toolsets and read-only mode; set before serving.
   */
  restrictTools(keep: (def: AnyTool<Ctx, State>, annotations: Annotations) => boolean): void {
    this.selected = keep;
    this.snapshot = this.snapshotOf(this.listTools());
  }

  /**
   * Whether tools/list carries each tool's `outputSchema` (compacted, as `compactSchema` writes it).
   * Off, a tool is listed without one and nothing else changes: its results still carry
   * `structuredContent`, checked against the full schema here when `validateOutput` is on. For a
   * run's `--output-schemas`; set before serving.
   */
  listOutputSchemas(on: boolean): void {
    this.outputSchemas = on;
  }

  /** Re-reads the gate state now; notifies every connection when the list or an annotation changed. */
  refresh(): Promise<boolean> {
    if (!this.def.gate) return Promise.resolve(false);
    this.refreshing ??= this.doRefresh().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async doRefresh(): Promise<boolean> {
    const gate = this.def.gate!;
    let timer: NodeJS.Timeout | undefined;
    const timeoutMs = gate.timeoutMs ?? 10_000;
    try {
      this.state = await Promise.race([
        gate.load(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } catch (err) {
      this.log(`gate check failed, keeping the previous state: ${(err as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
    this.lastCheck = this.now();
    const next = this.snapshotOf(this.listTools());
    if (next === this.snapshot) return false;
    this.snapshot = next;
    await Promise.all([
      ...[...this.listeners].map((s) => s.sendToolListChanged().catch(() => undefined)),
      ...[...this.changeListeners].map(async (notify) => {
        try {
          await notify();
        } catch (err) {
          this.log(`a tools-changed listener failed: ${(err as Error).message}`);
        }
      }),
    ]);
    return true;
  }

  private async refreshIfStale(): Promise<void> {
    if (this.def.gate && this.now() - this.lastCheck >= this.def.gate.maxAgeMs) await this.refresh();
  }

  /**
   * Runs one call as a connection would, returning the result the client receives. `delivered`
   * takes the call's `afterResult` work when the result is a success, to run once it is sent;
   * without it that work runs as this returns. Without a transport nobody can be asked: `ask`
   * and `askUrl` answer `unavailable`.
   */
  async callTool(
    name: string,
    args: unknown,
    caller: Caller,
    signal?: AbortSignal,
    delivered?: (run: () => void) => void,
  ): Promise<CallToolResult> {
    return (await this.runCall(name, args, caller, signal, delivered, undefined)) as CallToolResult;
  }

  /**
   * `callTool` with a channel to ask the person through: a handler whose question is not answered
   * yet ends the round as an `input_required` result (the SDK sends it to a 2026-07-28 client, and
   * turns it into `elicitation/create` for a 2025 one), its state sealed for the retry.
   */
  private async runCall(
    name: string,
    args: unknown,
    caller: Caller,
    signal: AbortSignal | undefined,
    delivered: ((run: () => void) => void) | undefined,
    channel: AskChannel | undefined,
  ): Promise<CallToolResult | InputRequiredResult> {
    const tool = this.tools.get(name);
    if (!tool || !this.isVisible(tool.def)) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool ${name} not found`);
    }
    const def = tool.def;
    const after: (() => void | Promise<void>)[] = [];
    const report = (err: unknown) =>
      this.log(`after the result of ${name}: ${(err as Error)?.message ?? String(err)}`);
    // Run at once, not a tick later: work that marks state (an acknowledgement on its way) is in
    // place before anything the client sends after reading the result.
    const runAfter = () => {
      for (const fn of after) {
        try {
          void Promise.resolve(fn()).catch(report);
        } catch (err) {
          report(err);
        }
      }
    };
    let asking: AskSession | undefined;
    try {
      if (def.scope !== null && !caller.scopes.includes(def.scope)) {
        throw new ToolError(
          "INSUFFICIENT_SCOPE",
          `The tool ${name} needs the scope ${def.scope}, which this connection was not granted`,
        );
      }
      const input = parseInput(tool.schemas.inputZod, args);
      const ctx = await this.def.context(caller);
      asking = channel ? new AskSession(channel, { tool: name, args: input }, validateAnswer) : undefined;
      const ask = asking ?? NO_ASKING;
      const result = (await def.handler(input, {
        ctx,
        caller,
        signal: signal ?? new AbortController().signal,
        afterResult: (fn) => void after.push(fn),
        ask: (form) => ask.ask(form),
        askUrl: (question) => ask.askUrl(question),
      })) as Record<string, unknown>;
      // A question waiting for its answer ends the round whatever the handler did after it (caught
      // the unwinding and returned, or threw something else): nothing it returned is the answer.
      if (asking?.pending) return await asking.inputRequired();
      if (this.validateOutput) {
        const validate = tool.validateResult();
        if (!validate(result))
          throw new Error(`result does not match the output schema: ${JSON.stringify(validate.errors)}`);
      }
      const success = successResult(
        result,
        def.summary(result as z.output<z.ZodObject>, input),
        this.textMode,
      );
      if (after.length > 0) {
        if (delivered) delivered(runAfter);
        else queueMicrotask(runAfter);
      }
      return success;
    } catch (err) {
      if (asking?.pending) return await asking.inputRequired();
      return errorResult(toErrorBody(err, this.def.reasons, this.log, name));
    }
  }

  /**
   * A protocol instance answering tools/list and tools/call for this server. The serving entries
   * (stdio, HTTP, in-memory pairs) call it once per connection or, for 2026-07-28 over HTTP, once
   * per request. `caller` is who calls when the transport carries no token (stdio); a verified
   * HTTP token takes its place. A `listening` instance is told when the tool list changes: a
   * connection is; a per-request instance is not (its era hears of changes through
   * `onToolsChanged` instead).
   */
  protocolInstance(caller: Caller, options: { listening: boolean }): Server {
    const server = new DeliveringServer(
      { name: this.name, version: this.version },
      {
        capabilities: { tools: { listChanged: true } },
        ...(this.def.instructions ? { instructions: this.def.instructions } : {}),
        requestState: { verify: (state, ctx) => this.askCodec.verify(state, ctx) },
        // A person answers at human pace: the SDK's 2025-era shim waits for an answer as long as
        // the sealed state lives.
        inputRequired: { roundTimeoutMs: this.askTtlSeconds * 1000 },
      },
    );
    server.setRequestHandler("tools/list", async () => {
      await this.refreshIfStale();
      return { tools: this.listTools() };
    });
    server.setRequestHandler("tools/call", async (request, ctx) => {
      const who = callerOf(ctx.http?.authInfo) ?? caller;
      const { id, signal } = ctx.mcpReq;
      const version = server.getNegotiatedProtocolVersion();
      const modern = version !== undefined && version >= MODERN_REVISION;
      const channel: AskChannel = {
        modern,
        capabilities: modern
          ? // The SDK types the envelope as `{}`; its keys are the reserved `_meta` names.
            ((ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as
              | ClientCapabilities
              | undefined)
          : server.getClientCapabilities(),
        responses: ctx.mcpReq.inputResponses,
        state: ctx.mcpReq.requestState(),
        seal: (state) => this.askCodec.mint(state, ctx),
        notify: (notification) => ctx.mcpReq.notify(notification),
      };
      return this.runCall(
        request.params.name,
        request.params.arguments,
        who,
        signal,
        (run) => server.afterSent(id, signal, run),
        channel,
      );
    });
    if (options.listening) {
      this.listeners.add(server);
      server.onclose = () => this.listeners.delete(server);
    }
    return server;
  }

  /** Reads the gate state once, if it was never read: the serving entries call this before serving. */
  async ready(): Promise<void> {
    if (this.def.gate && this.lastCheck === Number.NEGATIVE_INFINITY) await this.refresh();
  }

  /** Runs `listener` whenever the listed tools or their annotations change. Returns the unsubscribe. */
  onToolsChanged(listener: () => void | Promise<void>): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  async close(): Promise<void> {
    await Promise.all([...this.listeners].map((s) => s.close()));
  }

  private isVisible(def: AnyTool<Ctx, State>): boolean {
    if (this.selected && !this.selected(def, this.annotationsOf(def))) return false;
    return def.visibleWhen ? def.visibleWhen(this.state) : true;
  }

  private annotationsOf(def: AnyTool<Ctx, State>): Annotations {
    return { ...def.annotations, ...(def.liveAnnotations ? def.liveAnnotations(this.state) : {}) };
  }

  private describe(tool: CompiledTool<Ctx, State>): Tool {
    const { def, schemas } = tool;
    const a = this.annotationsOf(def);
    return {
      name: def.name,
      title: def.title,
      description: def.description,
      inputSchema: schemas.inputSchema as Tool["inputSchema"],
      // Read only when listed: the getter builds the compact schema on first use.
      ...(this.outputSchemas ? { outputSchema: schemas.outputSchema as Tool["outputSchema"] } : {}),
      annotations: {
        title: def.title,
        readOnlyHint: a.readOnly,
        destructiveHint: a.destructive,
        idempotentHint: a.idempotent,
        openWorldHint: a.openWorld,
      },
      _meta: {
        [GROUP_META_KEY]: def.group,
        ...(def.scope ? { [SCOPE_META_KEY]: def.scope } : {}),
        ...(def.annotationConditions
          ? {
              [ANNOTATION_CONDITIONS_META_KEY]: Object.fromEntries(
                Object.entries(def.annotationConditions).map(([k, when]) => [
                  HINT_NAMES[k as keyof typeof HINT_NAMES],
                  when,
                ]),
              ),
            }
          : {}),
      },
    };
  }

  private snapshotOf(tools: Tool[]): string {
    return JSON.stringify(tools.map((t) => [t.name, t.annotations]));
  }
}

/**
 * A protocol instance that hears when a response has been handed to its transport: the SDK sends
 * a tool's result after the handler returns (and not at all when the request was cancelled), so
 * only the transport's `send` can tell that it went out.
 */
class DeliveringServer extends KitProtocolServer {
  private readonly pending = new Map<RequestId, () => void>();

  /**
   * Runs `run` once the response to request `id` is sent; never if the request is cancelled before
   * the SDK sends it (the SDK then sends nothing) or the send fails. A cancel that crosses the
   * result on the wire is not seen: the transport closing after a response (HTTP, one request per
   * exchange) aborts the same signal, so an abort after the send cannot mean the client refused it.
   */
  afterSent(id: RequestId, signal: AbortSignal, run: () => void): void {
    if (signal.aborted) return;
    this.pending.set(id, run);
    signal.addEventListener("abort", () => this.pending.delete(id), { once: true });
  }

  override async connect(transport: Transport): Promise<void> {
    // Wrapped in place: the SDK keys per-request state by the transport object itself.
    const send = transport.send.bind(transport);
    transport.send = async (message: JSONRPCMessage, options?: TransportSendOptions) => {
      const after = "result" in message ? this.pending.get(message.id) : undefined;
      if (after) this.pending.delete((message as { id: RequestId }).id);
      await send(message, options);
      after?.();
    };
    await super.connect(transport);
  }

  override async close(): Promise<void> {
    this.pending.clear();
    await super.close();
  }
}

/** The caller a verified HTTP token stands for; undefined when the request carried none (stdio). */
function callerOf(auth: AuthInfo | undefined): Caller | undefined {
  if (!auth) return undefined;
  return { scopes: auth.scopes, clientId: auth.clientId, ...(auth.extra ? { extra: auth.extra } : {}) };
}

function compileAll<Ctx, State>(
  tools: readonly AnyTool<Ctx, State>[],
): Map<string, CompiledTool<Ctx, State>> {
  const byName = new Map<string, CompiledTool<Ctx, State>>();
  for (const def of [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (byName.has(def.name)) throw new Error(`Tool "${def.name}" is declared twice`);
    const schemas = compileSchemas(def);
    let validate: ValidateFunction | undefined;
    byName.set(def.name, {
      def,
      schemas,
      validateResult: () => {
        validate ??= sharedAjv().compile(schemas.resultSchema);
        return validate;
      },
    });
  }
  return byName;
}

/** The first revision of the 2026-07-28 era (revisions are dates, so they compare as strings). */
const MODERN_REVISION = "2026-07-28";

/** Checks a person's accepted answer against the form it answers; a problem as one line, or undefined. */
function validateAnswer(schema: object, content: unknown): string | undefined {
  const ajv = sharedAjv();
  const validate = ajv.compile(schema);
  // Each question's form is a new object, and ajv keeps every schema it compiled: drop it again.
  ajv.removeSchema(schema);
  if (validate(content)) return undefined;
  const e = validate.errors?.[0];
  return e ? `${e.instancePath || "the answer"} ${e.message ?? "is invalid"}` : "it is invalid";
}

let ajv: Ajv | undefined;
function sharedAjv(): Ajv {
  // The same validator set-up as the SDK client's, formats included, so a result the kit lets
  // through is one every SDK client accepts. Loaded on the first call that validates, not at
  // import: loading ajv and its formats cost a stdio server about 45 ms before its first answer.
  if (!ajv) {
    const require = createRequire(import.meta.url);
    const { Ajv: AjvClass } = require("ajv") as typeof import("ajv");
    const formats = require("ajv-formats") as typeof addFormats;
    ajv = new AjvClass({ strict: false, allErrors: false });
    formats.default(ajv);
  }
  return ajv;
}

/** A kit server of any context and state, as the transports see it. */
// biome-ignore lint/suspicious/noExplicitAny: a transport does not care about context and state types
export type AnyKit = KitServer<any, any>;

/** Builds a server from declarations; throws at start-up, naming the tool, when a declaration is wrong. */
export function createServer<Ctx, State = undefined>(
  def: ServerDefinition<Ctx, State>,
): KitServer<Ctx, State> {
  return new KitServer(def);
}
