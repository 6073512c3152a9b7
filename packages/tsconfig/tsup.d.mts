import type { Options } from "tsup";
export declare function packageBuild(options: {
  entry: string[];
  dts: string[];
  external?: string[];
}): Options;
