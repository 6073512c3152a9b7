// The build every package shares: ESM for Node 20, code-split chunks, declarations for the public
// entries, source maps. A package names only its entries (and what stays external).
import { defineConfig } from "tsup";

/**
 * @param {{ entry: string[]; dts: string[]; external?: string[] }} options
 *   `entry`: every file to build (public entries, bins, workers); `dts`: the public entries that get
 *   declarations; `external`: modules resolved from node_modules at run time instead of bundled.
 */
export function packageBuild({ entry, dts, external }) {
  return defineConfig({
    entry,
    format: ["esm"],
    target: "node20",
    dts: { entry: dts },
    sourcemap: true,
    clean: true,
    splitting: true,
    ...(external ? { external } : {}),
  });
}
