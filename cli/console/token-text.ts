// Token text for the console's token view, from a model directory's tokenizer (`--model DIR`).
import { loadTokenizer } from '../../model/tokenizer/load-tokenizer.ts';

export async function tokenTextFromModel(dir: string): Promise<(ids: readonly number[]) => string[]> {
  const tokenizer = await loadTokenizer(dir);
  return (ids) => ids.map((id) => tokenizer.decodeToken(id));
}
