// Finds the query in the model's final answer: the last ```sql fenced block, else any last fenced
// block, else the whole answer when it reads as a query.

export function extractFinalSql(answer: string): string | undefined {
  const blocks = [...answer.matchAll(/```([A-Za-z]*)[ \t]*\n([\s\S]*?)```/g)];
  const sqlBlocks = blocks.filter((block) => (block[1] ?? '').toLowerCase() === 'sql');
  const chosen = (sqlBlocks.at(-1) ?? blocks.at(-1))?.[2]?.trim();
  if (chosen) return chosen;
  const bare = answer.trim();
  return /^(select|with)\b/i.test(bare) ? bare : undefined;
}
