// The public entry `edgerl/environment` (package.json "exports"): what an environment author imports
// to write environments outside edgerl's tree. Worker-safe (no node: modules); the loader that imports
// a user's file in Node is edge/runtime/import-environments.ts, and test helpers are edgerl/environment/testing.
export type { Capabilities, CapabilityName } from './capabilities.ts';
export { capabilityNames } from './capabilities.ts';
export {
  defaultToolTimeoutMs,
  defineEnvironment,
  type Environment,
  type EnvironmentDefinition,
  type EnvironmentTask,
  type ToolChoice,
  type VerifierContext,
  type VerifierInput,
  type VerifierResult,
} from './environment.ts';
export {
  type EnvironmentList,
  type EnvironmentRecord,
  environmentRecord,
} from './environment-record.ts';
export { combineEnvironments } from './combine-environments.ts';
export { environments as shippedEnvironments } from './environments.ts';
export { hashString } from './hash-string.ts';
export { type Random, randomInt, seededRandom, shuffled } from './seeded-random.ts';
export { splitOf } from './split-of.ts';
export {
  defineTool,
  type JsonSchemaObject,
  type Tool,
  type ToolContext,
  type ToolDefinition,
} from './tool.ts';
export { ToolRefusal } from './tool-refusal.ts';
export { type TaskSplit, taskSplits } from '../../protocol/statuses.ts';
export type { AssistantMessage, ChatMessage, ToolCall, ToolSpec } from '../../protocol/chat.ts';
