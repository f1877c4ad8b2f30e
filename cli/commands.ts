// The closed list of `edgerl` commands. Each lives in its own file under cli/commands/.
import type { Command } from './command.ts';
import { dbMigrateCommand } from './commands/db-migrate.ts';
import { demoCommand } from './commands/demo.ts';
import { modelInitCommand } from './commands/model-init.ts';
import { scoreCommand } from './commands/score.ts';
import { serveModelCommand } from './commands/serve-model.ts';
import { sqlCommand } from './commands/sql.ts';
import { trainCommand } from './commands/train.ts';

export const commands: readonly Command[] = [
  demoCommand,
  dbMigrateCommand,
  sqlCommand,
  scoreCommand,
  modelInitCommand,
  serveModelCommand,
  trainCommand,
];
