import { sharedConfig } from "@mcpforge/vitest-config";
export default sharedConfig();
