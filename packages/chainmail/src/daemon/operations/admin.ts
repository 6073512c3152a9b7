/** The operator's view of the daemon (`chainmail admin status`): only the `cli` client may call it. */
import { z } from "zod";
import type { AdminStatus } from "../../service/admin.js";
import { operation } from "./define.js";

export const adminOperations = {
  "admin.status": operation<AdminStatus>()({ params: z.object({}), audit: null, mutates: false }),
};
