/** The batch operations: 1-500 refs from any accounts, one outcome per ref. */
import { z } from "zod";
import { MAX_FLAG_PARAM, MAX_FLAGS_PER_CALL } from "../../limits.js";
import type { BatchResult } from "../../service/organize.js";
import { operation } from "./define.js";
import { BatchRefsField, FolderField, LabelsField } from "./fields.js";

const refs = z.object({ refs: BatchRefsField });
const toFolder = refs.extend({ folder: FolderField });
const flags = z.array(z.string().max(MAX_FLAG_PARAM)).max(MAX_FLAGS_PER_CALL).default([]);
const labels = LabelsField.default([]);
const batch = operation<BatchResult>();

export const organizeOperations = {
  move: batch({ params: toFolder, audit: "move", mutates: true }),
  copy: batch({ params: toFolder, audit: "copy", mutates: true }),
  archive: batch({ params: refs, audit: "archive", mutates: true }),
  trash: batch({ params: refs, audit: "trash", mutates: true }),
  expunge: batch({ params: refs, audit: "expunge", mutates: true }),
  flags: batch({ params: refs.extend({ add: flags, remove: flags }), audit: "flags", mutates: true }),
  labels: batch({ params: refs.extend({ add: labels, remove: labels }), audit: "labels", mutates: true }),
};
