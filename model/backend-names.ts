// The TensorFlow.js backends by the names --backend and EDGERL_BACKEND take, and the order tried when
// none is named. Kept apart from model/backend.ts, which activates them and imports TensorFlow.js, so
// that usage text (`edgerl train --help`, `edgerl serve-model --help`) names them without loading it.

/** In the order the usage lists them; model/backend.ts has one activation per name. */
export const backendNames = ['node-gpu', 'webgpu', 'webgpu:software', 'node', 'wasm', 'cpu'] as const;
export type BackendChoice = (typeof backendNames)[number];

/** Tried in this order when nothing is requested (webgpu:software only on request). */
export const backendPreference: readonly BackendChoice[] = ['node-gpu', 'webgpu', 'node', 'wasm', 'cpu'];

/** Help text for --backend flags. */
export const backendFlagHelp = `${backendNames.join(' | ')} (or EDGERL_BACKEND; default: first available of ${backendPreference.join(' → ')})`;

export function isBackendChoice(value: string): value is BackendChoice {
  return (backendNames as readonly string[]).includes(value);
}
