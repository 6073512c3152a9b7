/**
 * `chainmail policy confirm`: the owner's own step, so it asks for a person at a terminal. It runs
 * only when stdin and stdout are both terminals, shows what it confirms and a code of random
 * characters (new each time, from the OS's random source, never derived from anything on disk), and
 * confirms only when that code is typed back. An agent whose tools pipe its commands (no terminal)
 * is refused before anything is sent to the daemon.
 *
 * This stops an agent that runs commands through a pipe, not one with a full shell: such an agent can
 * open a pseudo-terminal of its own (script, expect) and read the code there, and it can read
 * state.db and the secrets anyway. Only the strong mode (the daemon under its own OS user, the
 * socket open to a group) keeps config.toml, state.db and the secrets out of the agent's reach; see
 * the README.
 */
import { randomInt } from "node:crypto";
import readline from "node:readline";
import type { DaemonClient } from "../client/index.js";
import { MailError } from "../errors.js";
import type { PolicyStatus } from "../policy/service.js";
import type { Request } from "./command-kit.js";

/** Letters and digits that cannot be mistaken for each other (no 0/O, 1/I/L). */
const ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
export const CODE_LENGTH = 6;

export function confirmationCode(): string {
  let code = "";
  for (let i = 0; i < CODE_LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return code;
}

/** What the owner typed, compared without case, spaces or dashes. */
export const sameCode = (typed: string, code: string) =>
  typed.replace(/[\s-]/g, "").toUpperCase() === code.toUpperCase();

export interface Terminal {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream & { isTTY?: boolean };
}

/** Refuses unless both ends are a terminal: checked before the daemon is asked anything. */
export function requireTerminal(term: Terminal): void {
  const missing = [!term.input.isTTY && "stdin", !term.output.isTTY && "stdout"].filter(Boolean);
  if (missing.length > 0)
    throw new MailError(
      "POLICY_DENIED",
      `chainmail policy confirm needs an interactive terminal (${missing.join(" and ")} ${missing.length > 1 ? "are not terminals" : "is not a terminal"}): only the account owner confirms a wider policy, by typing back a code it shows there, so an agent that runs commands cannot confirm its own widening`,
      "The owner runs `chainmail policy confirm` in their own terminal; `chainmail policy status` shows what waits.",
    );
}

function ask(term: Terminal, question: string): Promise<string> {
  const rl = readline.createInterface({ input: term.input, output: term.output, terminal: true });
  return new Promise<string>((resolve, reject) => {
    rl.once("close", () =>
      reject(new MailError("POLICY_DENIED", "no code was typed; nothing was confirmed")),
    );
    rl.question(question, (answer) => {
      rl.removeAllListeners("close");
      rl.close();
      resolve(answer);
    });
  });
}

/**
 * The confirm command's request: shows each pending change with its digest, asks for the code, then
 * confirms each shown account with the digest shown (so a config.toml changed meanwhile is refused).
 */
export function confirmRequest(
  account: string | undefined,
  digest: string | undefined,
  term: Terminal,
): Request {
  requireTerminal(term);
  return {
    send: async (client: DaemonClient) => {
      const { accounts } = (await client.call("policy.status", {})) as { accounts: PolicyStatus[] };
      const chosen = accounts.filter((s) => account === undefined || s.account === account);
      if (account !== undefined && chosen.length === 0)
        throw new MailError("NOT_FOUND", `no account named ${JSON.stringify(account)}`);
      const todo = chosen.filter((s) => s.pending && (digest === undefined || s.digest === digest));
      if (digest !== undefined && (todo.length !== 1 || chosen.filter((s) => s.pending).length !== 1))
        throw new MailError(
          "CONFLICT",
          "config.toml's policy is not the one with that digest (it changed since it was shown)",
          "Run `chainmail policy status` again and confirm what it shows.",
        );
      if (todo.length === 0) return { confirmed: [] };
      const shown = todo
        .map((s) => `  ${s.account} (digest ${s.digest}):\n${s.changes.map((c) => `    ${c}\n`).join("")}`)
        .join("");
      const code = confirmationCode();
      term.output.write(`chainmail policy confirm: these changes in config.toml wait for you:\n${shown}`);
      const typed = await ask(term, `To confirm them, type this code: ${code}\n> `);
      if (!sameCode(typed, code))
        throw new MailError(
          "POLICY_DENIED",
          "the code typed is not the one shown; nothing was confirmed",
          "Run `chainmail policy confirm` again and type the code it shows.",
        );
      const confirmed: Array<{ account: string; changes: string[] }> = [];
      for (const s of todo) {
        const r = (await client.call("policy.confirm", { account: s.account, digest: s.digest })) as {
          confirmed: Array<{ account: string; changes: string[] }>;
        };
        confirmed.push(...r.confirmed);
      }
      return { confirmed };
    },
  };
}
