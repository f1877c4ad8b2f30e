// The closed list of `edgerl` commands. Each lives in its own file under cli/commands/.
import type { Command } from './command.ts';

export const commands: readonly Command[] = [];
