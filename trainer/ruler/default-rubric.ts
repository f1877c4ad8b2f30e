// The rubric RULER uses when neither the environment nor the call supplies one. Written for agents
// that call tools: the task itself is inferred from each trajectory's system prompt and first user
// message, so one generic rubric serves every environment whose prompts state their goal clearly.
//
// Why these points: GRPO only uses the ranking and spacing of scores inside a group (DeepSeekMath,
// arXiv:2402.03300 §4.1.2), so the rubric asks for comparative, proportional scores rather than a
// calibrated absolute scale; "honest failure beats a confident wrong answer" follows the hand-written
// ART·E reward (wrong answer −1, "don't know" 0; see the ART/RULER notes §9).

export const DEFAULT_RUBRIC = `- Solving the task correctly matters most: an attempt that reaches a correct, complete result scores above every attempt that does not.
- Trust evidence over claims. What counts is what the tool results in the conversation support; an answer the agent asserted without checking, invented facts, made-up tool arguments and tool errors that were ignored all lower the score.
- A confident wrong answer is worse than an honest statement that the task could not be finished.
- Among attempts that succeed, the one that got there with fewer redundant tool calls, detours and wasted words scores higher.
- An attempt that did only part of the task earns credit in proportion to how much of it was done.
- The instructions of the system prompt (output format, limits, rules) are part of the task.
- Use the whole range: a clear failure is near 0, a clean and efficient success near 1, and attempts of equal quality get equal scores.`;
