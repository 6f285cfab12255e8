/**
 * The bus's direct hand-off lane, fenced: the only code of the bus that
 * writes BullMQ's private keys and mirrors its Lua scripts. README.md in this
 * folder lists what it relies on, the tests that pin it, and the checklist
 * for a BullMQ upgrade. The rest of the bus imports it from here only.
 */
export { bullKeysOf, handoffKeysOf, handoffTokenOf, type HandoffKeys } from './handoff-keys';
export {
  DEFAULT_ALIVE_TTL_MS,
  HandoffLane,
  parseLaneEntry,
  rawJobOf,
  type HandedOffJob,
  type HandoffLaneOptions,
} from './handoff-lane';
export { JobCompleter, type CompletionKeys, type ReplyToSend } from './job-complete';
export { JobInserter, type InsertedAs } from './job-insert';
