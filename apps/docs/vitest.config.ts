import { sharedConfig } from "@mcpforge/vitest-config";

// One browser test walks the whole built site: minutes, not seconds, on two cores.
export default sharedConfig({
  test: { testTimeout: 300_000, hookTimeout: 120_000, maxWorkers: 1 },
});
