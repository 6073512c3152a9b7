/**
 * The wiring: a DaemonClient of kind `mcp` on the home's socket, the MCP server over it, and the kit
 * serving stdio (or Streamable HTTP). The daemon holds the accounts, the policy and the audit log.
 */
import { DaemonClient, resolveHome } from "@mcpforge/chainmail";
import { type CommonFlags, runServer } from "@mcpforge/toolkit";
import { createChainmailMcpServer } from "./mcp/server.js";

export interface AppOptions {
  flags: CommonFlags;
  /** chainmail's home; default CHAINMAIL_HOME, else the XDG dirs. */
  home?: string | undefined;
  /** The daemon's socket; default CHAINMAIL_SOCKET, else the home's. */
  socket?: string | undefined;
  listGatedTools: boolean;
  /** Re-ask the daemon for the policy once the last check is this old. */
  gateMaxAgeMs?: number | undefined;
}

/** Runs the server until the client hangs up. */
export async function startApp(options: AppOptions): Promise<void> {
  const home = resolveHome(
    options.home,
    options.socket ? { ...process.env, CHAINMAIL_SOCKET: options.socket } : process.env,
  );
  const client = new DaemonClient({
    socketPath: home.socketPath,
    socketNamed: home.socketNamed,
    client: "mcp",
  });
  const kit = createChainmailMcpServer({
    client,
    home,
    listGatedTools: options.listGatedTools,
    ...(options.gateMaxAgeMs !== undefined ? { maxAgeMs: options.gateMaxAgeMs } : {}),
  });
  // The kit exits when a stdio client hangs up; the daemon socket is closed first.
  await runServer(kit, {
    flags: options.flags,
    caller: { scopes: [], clientId: "local" },
    onClose: () => client.close(),
  });
}
