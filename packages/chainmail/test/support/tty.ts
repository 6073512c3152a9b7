// The built CLI in a real pseudo-terminal (util-linux `script`), as the owner runs it: what it prints
// is read as it comes, and `answer` types a line once the confirmation code is shown.
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const pkg = path.dirname(path.dirname(path.dirname(fileURLToPath(import.meta.url))));
export const CLI = path.join(pkg, "dist", "bin", "chainmail.js");

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The code `chainmail policy confirm` shows, once it has shown one. */
export const shownCode = (out: string) => /type this code: ([A-Z0-9]+)/.exec(out)?.[1];

/**
 * Runs `chainmail ARGS` with stdin and stdout on a pseudo-terminal. `answer` gets the code shown
 * (undefined: nothing shown yet is never passed) and returns the line to type back.
 */
export function cliInTerminal(
  args: string[],
  answer: (code: string) => string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; out: string }> {
  const cmd = [process.execPath, CLI, ...args].map(quote).join(" ");
  return new Promise((resolve, reject) => {
    // -q quiet, -e the child's exit code, -f flush, -c the command; no typescript file kept.
    const child = spawn("script", ["-qefc", cmd, "/dev/null"], { env, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let typed = false;
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString("utf8");
      const code = shownCode(out);
      if (code && !typed) {
        typed = true;
        child.stdin.write(`${answer(code)}\r`);
      }
    });
    child.stderr.on("data", (b: Buffer) => {
      out += b.toString("utf8");
    });
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}
