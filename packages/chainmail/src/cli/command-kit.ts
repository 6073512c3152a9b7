/**
 * How a CLI daemon command is declared: its own flags (node:util parseArgs options) and the one
 * daemon request it builds from them, typed by the operation table (src/daemon/operations).
 */
import type { ParseArgsConfig, parseArgs } from "node:util";
import type { DaemonClient } from "../client/index.js";
import type { Method, ParamsOf } from "../daemon/protocol.js";
import { MailError } from "../errors.js";
import type { MailEvent } from "../events/log.js";

export type Options = NonNullable<ParseArgsConfig["options"]>;
export type Values<O extends Options> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: true }>
>["values"];

/** One daemon call, ready to send. */
export interface Request {
  send(client: DaemonClient): Promise<unknown>;
  /** A command that prints as it goes (watch) instead of one result; runs until `stopped`. */
  stream?: (client: DaemonClient, out: (e: MailEvent) => void, stopped: () => boolean) => Promise<void>;
}

export interface DaemonCommand<O extends Options = Options> {
  options: O;
  /** The request, from the command's flags and its positionals after the command name. */
  request(o: Values<O>, args: string[]): Request;
}

export const request = <M extends Method>(method: M, params: ParamsOf<M>): Request => ({
  send: (client) => client.call<Method>(method, params),
});
export const command = <const O extends Options>(c: DaemonCommand<O>): DaemonCommand => c as DaemonCommand;

export function usage(message: string): never {
  throw new MailError("INVALID_ARGUMENT", message, "Run chainmail --help.");
}

export function need(args: string[], n: number, what: string, cmd: string): void {
  if (args.length < n) usage(`${cmd} needs ${what}`);
}

export function whole(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) usage(`--${name} must be a whole number`);
  return Number(v);
}
