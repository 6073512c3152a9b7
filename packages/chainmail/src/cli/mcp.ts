/** `chainmail [--home DIR] mcp ...`: the MCP server from @mcpforge/chainmail-mcp, loaded only here. */
import { MailError } from "../errors.js";

/**
 * The argv after `mcp` (with any --home or --socket before it), when the command is
 * `chainmail [--home DIR] [--socket PATH] mcp`.
 */
export function mcpArgs(argv: readonly string[]): string[] | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--home" || a === "--socket") i++;
    else if (a.startsWith("--home=") || a.startsWith("--socket=")) continue;
    else if (a === "mcp") return [...argv.slice(0, i), ...argv.slice(i + 1)];
    else return undefined;
  }
  return undefined;
}

/**
 * That package depends on this one, so it cannot be a static import; the specifier is a variable so
 * the bundler leaves it alone.
 */
export async function runMcp(args: string[]): Promise<number> {
  const specifier = "@mcpforge/chainmail-mcp";
  let mod: { main(argv: readonly string[]): Promise<void> };
  try {
    mod = (await import(specifier)) as typeof mod;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "ERR_MODULE_NOT_FOUND" && String((err as Error).message).includes(specifier)) {
      throw new MailError(
        "UNSUPPORTED",
        "chainmail mcp needs the package @mcpforge/chainmail-mcp, which is not installed",
        "Install it next to chainmail: npm install -g @mcpforge/chainmail-mcp (or run its chainmail-mcp bin).",
      );
    }
    throw err;
  }
  await mod.main(args);
  return 0;
}
