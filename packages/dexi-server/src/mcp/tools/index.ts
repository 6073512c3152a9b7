import { readTools } from "./read.js";
import { reviewTools } from "./review.js";
import { writeTools } from "./write.js";

export type { DexiContext } from "./common.js";
export const dexiTools = [...readTools, ...writeTools, ...reviewTools];
