// The closed list of `edgerl` commands. Each lives in its own file under cli/commands/.
import type { Command } from './command.ts';
import { abCreateCommand } from './commands/ab-create.ts';
import { abListCommand } from './commands/ab-list.ts';
import { abPromoteCommand } from './commands/ab-promote.ts';
import { abReportCommand } from './commands/ab-report.ts';
import { abRollbackCommand } from './commands/ab-rollback.ts';
import { abStopCommand } from './commands/ab-stop.ts';
import { dbMigrateCommand } from './commands/db-migrate.ts';
import { demoCommand } from './commands/demo.ts';
import { edgeCommand } from './commands/edge.ts';
import { modelInitCommand } from './commands/model-init.ts';
import { rolloutCommand } from './commands/rollout.ts';
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
  edgeCommand,
  rolloutCommand,
  abCreateCommand,
  abListCommand,
  abReportCommand,
  abStopCommand,
  abPromoteCommand,
  abRollbackCommand,
];
