import type { UserConfig } from "vitest/config";
export declare function sharedConfig(own?: UserConfig): UserConfig;
