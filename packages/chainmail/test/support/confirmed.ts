/**
 * state.db as an earlier daemon the owner had confirmed would leave it: every account's server
 * settings confirmed (as `policy.confirm` records them), its policy still waiting. For tests that
 * seed a state.db before the daemon starts (the recovery of an interrupted send runs at the start).
 */
import type { Config } from "../../src/config.js";
import { reconcilePolicies } from "../../src/policy/service.js";
import { EndpointStore } from "../../src/store/endpoints.js";
import type { StateDb } from "../../src/store/state.js";

export function confirmServerSettings(state: StateDb, config: Config): void {
  reconcilePolicies(state, config);
  const endpoints = new EndpointStore(state.db);
  for (const a of config.accounts) {
    const row = endpoints.get(a.name);
    if (row?.pending) endpoints.put(a.name, row.pending, null);
  }
}
