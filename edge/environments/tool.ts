// A tool an environment offers the model: the spec the model sees (name, description, JSON-schema
// parameters) and the code that runs it. Parameters are given as a zod schema or as plain JSON
// schema; either way the arguments are validated before `run` sees them.
import { z } from 'zod';
import type { ToolSpec } from '../../protocol/chat.ts';
import { formatIssues } from '../../protocol/format-issues.ts';
import type { Capabilities } from './capabilities.ts';

/** What a tool's `run` receives besides its arguments. */
export interface ToolContext<TTask> extends Capabilities {
  readonly task: TTask;
  /** Aborted when the tool's time is up or the episode is cancelled; pass it on to any I/O. */
  readonly signal: AbortSignal;
}

export type JsonSchemaObject = Record<string, unknown>;

/** A tool as written by an environment author. */
export interface ToolDefinition<TArgs, TTask> {
  /** The function name the model calls: 1–64 of `[A-Za-z0-9_-]` (OpenAI's rule for function names). */
  readonly name: string;
  readonly description: string;
  readonly parameters: z.ZodType<TArgs> | JsonSchemaObject;
  /** Overrides the environment's tool timeout, in milliseconds. */
  readonly timeoutMs?: number;
  /** Returns the observation: text as is, anything else as JSON. Throw `ToolRefusal` to refuse. */
  run(args: TArgs, context: ToolContext<TTask>): Promise<unknown> | unknown;
}

export type ParsedArguments = { ok: true; value: unknown } | { ok: false; message: string };

/** A tool ready for the episode loop. */
export interface Tool<TTask> {
  readonly name: string;
  readonly description: string;
  /** Exactly what is sent to the model in `tools`. */
  readonly spec: ToolSpec;
  readonly timeoutMs?: number;
  /** Validates arguments already decoded from JSON; the message names each offending field. */
  parseArguments(args: unknown): ParsedArguments;
  // Method syntax on purpose: it keeps a `Tool<SpecificTask>` assignable where a `Tool<unknown>` is
  // expected (a registry of environments), which a function-typed property would forbid.
  run(args: unknown, context: ToolContext<TTask>): Promise<unknown> | unknown;
}

const toolNamePattern = /^[A-Za-z0-9_-]{1,64}$/;

export function defineTool<TArgs, TTask>(definition: ToolDefinition<TArgs, TTask>): Tool<TTask> {
  if (!toolNamePattern.test(definition.name)) {
    throw new Error(`tool name "${definition.name}" must be 1–64 characters of letters, digits, _ or -`);
  }
  if (definition.timeoutMs !== undefined && !(definition.timeoutMs > 0)) {
    throw new Error(`tool "${definition.name}": timeoutMs must be positive, got ${definition.timeoutMs}`);
  }
  const { schema, jsonSchema } = schemasOf(definition);
  return {
    name: definition.name,
    description: definition.description,
    spec: {
      type: 'function',
      function: { name: definition.name, description: definition.description, parameters: jsonSchema },
    },
    timeoutMs: definition.timeoutMs,
    parseArguments(args) {
      const parsed = schema.safeParse(args);
      return parsed.success
        ? { ok: true, value: parsed.data }
        : { ok: false, message: formatIssues(parsed.error) };
    },
    run(args, context) {
      return definition.run(args as TArgs, context);
    },
  };
}

function isZodSchema(value: unknown): value is z.ZodType {
  return typeof value === 'object' && value !== null && '_zod' in value;
}

function schemasOf<TArgs, TTask>(
  definition: ToolDefinition<TArgs, TTask>,
): { schema: z.ZodType; jsonSchema: JsonSchemaObject } {
  const { parameters } = definition;
  try {
    if (isZodSchema(parameters)) {
      // The model is shown the input side of the schema; `$schema` is dropped because every token of
      // the tool list is paid for on every turn.
      const { $schema: _, ...jsonSchema } = z.toJSONSchema(parameters, { io: 'input' });
      return { schema: parameters, jsonSchema };
    }
    return {
      schema: z.fromJSONSchema(parameters as Parameters<typeof z.fromJSONSchema>[0]),
      jsonSchema: parameters,
    };
  } catch (error) {
    throw new Error(`tool "${definition.name}": unusable parameters schema (${String(error)})`, {
      cause: error,
    });
  }
}
