export {
  type ChainmailContext,
  type GateState,
  GROUPS,
  UNREACHABLE,
} from "./context.js";
export { HELP, main } from "./main.js";
export {
  type ChainmailMcpOptions,
  chainmailReasons,
  chainmailTools,
  createChainmailMcpServer,
  INSTRUCTIONS,
  loadGateState,
  VERSION,
} from "./server.js";
