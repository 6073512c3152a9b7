export { type AppOptions, startApp } from "./app.js";
export { HELP, main } from "./bin/chainmail-mcp.js";
export { type ChainmailContext, type GateState, GROUPS, UNREACHABLE } from "./mcp/context.js";
export {
  type ChainmailMcpOptions,
  chainmailReasons,
  chainmailTools,
  createChainmailMcpServer,
  INSTRUCTIONS,
  loadGateState,
  VERSION,
} from "./mcp/server.js";
