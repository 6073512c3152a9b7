/**
 * `chainmail secret set ACCOUNT`: stores an account's password. At a terminal it asks for it without
 * echo; otherwise it reads stdin (`chainmail secret set work < file`, or from a pipe). It refuses an
 * account that is not in config.toml (a typo would store a password nothing reads) and one that does
 * not log in with a stored password.
 */
import { loadConfig } from "../config.js";
import { MailError } from "../errors.js";
import type { Home } from "../home.js";
import { secretFile, setSecret } from "../secrets.js";
import { usage } from "./command-kit.js";

export async function runSecret(home: Home, args: string[], json: boolean): Promise<number> {
  if (args[0] !== "set" || args.length !== 2)
    usage("usage: chainmail secret set ACCOUNT (asks at a terminal, else reads the password from stdin)");
  const name = args[1]!;
  secretFile(home.secretsDir, name); // INVALID_ARGUMENT for a name that could not be an account's
  const account = loadConfig(home.configFile).accounts.find((a) => a.name === name);
  if (!account)
    throw new MailError(
      "NOT_FOUND",
      `no account named ${JSON.stringify(name)} in ${home.configFile}`,
      "Add the account to config.toml first (chainmail accounts lists the configured ones).",
    );
  if (account.oauth)
    throw new MailError(
      "INVALID_ARGUMENT",
      `account ${name} signs in with OAuth2, not a stored password`,
      `Run \`chainmail auth login ${name}\`.`,
    );
  if (account.password_command)
    throw new MailError(
      "INVALID_ARGUMENT",
      `account ${name} takes its password from password_command`,
      "Remove password_command from config.toml to store a password instead.",
    );
  const stdin = process.stdin;
  const secret = stdin.isTTY ? await promptHidden(`Password for ${name}: `) : await readAll();
  setSecret(home.secretsDir, name, secret);
  if (!json) process.stderr.write(`stored the password of ${name}\n`);
  else process.stdout.write(`${JSON.stringify({ account: name, stored: true })}\n`);
  return 0;
}

async function readAll(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Reads one line from the terminal in raw mode, so nothing typed is echoed. Backspace deletes,
 * Enter ends, Ctrl-C and Ctrl-D abort (nothing is stored).
 */
function promptHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  // Raw (no echo) before the prompt shows: what is typed as soon as it appears is not echoed.
  stdin.setRawMode(true);
  process.stderr.write(prompt);
  return new Promise((resolve, reject) => {
    let value = "";
    const done = (err?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off("data", onData);
      process.stderr.write("\n");
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString("utf8")) {
        if (ch === "\r" || ch === "\n") return done();
        if (ch === "\u0003" || ch === "\u0004")
          return done(new MailError("INVALID_ARGUMENT", "cancelled: no password was stored"));
        if (ch === "\u007f" || ch === "\b") value = [...value].slice(0, -1).join("");
        else if (ch >= " ") value += ch;
      }
    };
    stdin.resume();
    stdin.on("data", onData);
  });
}
