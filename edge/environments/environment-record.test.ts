// What a user's environments module may export, and how the edge combines it with the shipped ones:
// records and arrays by name, and the errors (with their codes) for everything else.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { combineEnvironments } from './combine-environments.ts';
import { defineEnvironment, type Environment } from './environment.ts';
import { environmentRecord } from './environment-record.ts';
import { EnvironmentsError } from './environments-error.ts';
import { multiHop } from './multi-hop.ts';

function environment(name: string): Environment {
  return defineEnvironment({
    name,
    description: 'test',
    systemPrompt: 'answer',
    tools: [],
    maxTurns: 1,
    taskSchema: z.object({
      id: z.string(),
      split: z.enum(['train', 'eval', 'validation']),
      prompt: z.string(),
    }),
    sampleTask: (split, seed) => ({ id: `${name}:${seed}`, split, prompt: 'hi' }),
  });
}

function failure(run: () => unknown): { code: string; message: string } {
  try {
    run();
  } catch (error) {
    if (error instanceof EnvironmentsError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected an EnvironmentsError');
}

describe('environmentRecord', () => {
  const a = environment('env-a');
  const b = environment('env-b');

  it('takes an array or a record keyed by name, and gives them by name', () => {
    expect(environmentRecord([a, b], 'm.ts')).toEqual({ 'env-a': a, 'env-b': b });
    expect(environmentRecord({ 'env-a': a }, 'm.ts')).toEqual({ 'env-a': a });
    expect(environmentRecord([], 'm.ts')).toEqual({});
  });

  it('refuses what is not a list, entries not made by defineEnvironment, wrong keys and repeats', () => {
    expect(failure(() => environmentRecord('env-a', 'm.ts: default'))).toEqual({
      code: 'bad-export',
      message: 'm.ts: default is a string, not an array or a record of environments',
    });
    expect(failure(() => environmentRecord(new Map(), 'm.ts'))).toMatchObject({ code: 'bad-export' });
    // A definition not passed through defineEnvironment lacks the defaults it fills (tasks, toolTimeoutMs).
    const { tasks: _, ...withoutTasks } = a;
    expect(failure(() => environmentRecord([a, withoutTasks], 'm.ts'))).toEqual({
      code: 'not-an-environment',
      message: 'm.ts[1] is not an environment made with defineEnvironment (its tasks is not a function)',
    });
    expect(failure(() => environmentRecord([null], 'm.ts'))).toMatchObject({
      message: 'm.ts[0] is not an environment made with defineEnvironment (it is null)',
    });
    expect(failure(() => environmentRecord({ other: a }, 'm.ts'))).toEqual({
      code: 'not-an-environment',
      message: `m.ts.other is named "env-a": a record's keys must be the environments' names`,
    });
    expect(failure(() => environmentRecord([a, environment('env-a')], 'm.ts'))).toEqual({
      code: 'name-clash',
      message: 'm.ts has two environments named "env-a"',
    });
  });
});

describe('combineEnvironments', () => {
  it('serves yours beside the shipped ones, or alone with shipped: false', () => {
    const mine = environment('env-a');
    expect(Object.keys(combineEnvironments([mine]))).toEqual(['multi-hop', 'sql-agent', 'env-a']);
    expect(Object.keys(combineEnvironments([mine], { shipped: false }))).toEqual(['env-a']);
  });

  it('refuses a name a shipped environment has, naming the module', () => {
    expect(failure(() => combineEnvironments([environment('multi-hop')], { source: './envs.ts' }))).toEqual({
      code: 'name-clash',
      message:
        './envs.ts: "multi-hop" is the name of a shipped environment; rename yours (names are stored with every trajectory)',
    });
    // Without the shipped ones, the name is free.
    expect(combineEnvironments([multiHop], { shipped: false })).toEqual({ 'multi-hop': multiHop });
  });
});
