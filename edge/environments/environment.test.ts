import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type TaskSplit, taskSplits } from '../../protocol/statuses.ts';
import { defineEnvironment, type EnvironmentDefinition } from './environment.ts';
import { environmentNames, getEnvironment } from './environments.ts';
import { defineTool } from './tool.ts';

interface CountTask {
  id: string;
  split: TaskSplit;
  prompt: string;
  n: number;
}

const base: EnvironmentDefinition<CountTask> = {
  name: 'count-up',
  description: 'a toy',
  systemPrompt: 'Count.',
  tools: [],
  maxTurns: 2,
  taskSchema: z.object({
    id: z.string(),
    split: z.enum(taskSplits),
    prompt: z.string(),
    n: z.number(),
  }),
  sampleTask: (split, seed) => ({ id: `n${seed}`, split, prompt: `count to ${seed}`, n: seed }),
};

describe('defineEnvironment', () => {
  it('fills defaults and derives n tasks from the sampler, reproducibly', () => {
    const environment = defineEnvironment(base);
    expect(environment.toolTimeoutMs).toBe(10_000);
    expect(environment.requires).toEqual([]);
    expect(environment.verify).toBeUndefined();
    const tasks = environment.tasks('eval', 5, 42);
    expect(tasks).toHaveLength(5);
    expect(tasks.every((task) => task.split === 'eval')).toBe(true);
    expect(environment.tasks('eval', 5, 42)).toEqual(tasks);
    expect(environment.tasks('eval', 5, 43)).not.toEqual(tasks);
    expect(() => environment.tasks('train', -1, 0)).toThrow(/n must be a non-negative integer, got -1/);
  });

  it('asks for tools with "auto" and unmarked specs unless told otherwise', () => {
    const add = defineTool({
      name: 'add',
      description: 'Adds.',
      parameters: z.object({ a: z.number() }),
      run: () => '',
    });
    const plain = defineEnvironment({ ...base, tools: [add] });
    expect({ toolChoice: plain.toolChoice, strictTools: plain.strictTools }).toEqual({
      toolChoice: 'auto',
      strictTools: false,
    });
    const guided = defineEnvironment({ ...base, tools: [add], toolChoice: 'required', strictTools: true });
    expect({ toolChoice: guided.toolChoice, strictTools: guided.strictTools }).toEqual({
      toolChoice: 'required',
      strictTools: true,
    });
    // The specs (what trajectories store) stay as they are.
    expect(guided.tools[0]?.spec).toEqual(add.spec);
  });

  it('names the problem in a bad definition', () => {
    expect(() => defineEnvironment({ ...base, toolChoice: 'required' })).toThrow(
      /count-up: toolChoice "required" needs at least one tool/,
    );
    expect(() => defineEnvironment({ ...base, name: 'Count Up' })).toThrow(/must be kebab-case/);
    expect(() => defineEnvironment({ ...base, maxTurns: 0 })).toThrow(
      /count-up: maxTurns must be a positive integer, got 0/,
    );
    expect(() => defineEnvironment({ ...base, toolTimeoutMs: -5 })).toThrow(/toolTimeoutMs must be positive/);
    const tool = defineTool({ name: 'add', description: '', parameters: z.object({}), run: () => '' });
    expect(() => defineEnvironment({ ...base, tools: [tool, tool] })).toThrow(/two tools are named "add"/);
  });
});

describe('getEnvironment', () => {
  it('finds the shipped environments and names them when asked for another', () => {
    expect(environmentNames).toEqual(['multi-hop', 'sql-agent']);
    expect(getEnvironment('sql-agent').requires).toEqual(['sql']);
    expect(() => getEnvironment('chess')).toThrow('unknown environment "chess"; known: multi-hop, sql-agent');
    expect(() => getEnvironment('toString')).toThrow(/unknown environment/);
  });
});
