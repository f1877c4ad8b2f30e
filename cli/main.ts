// `edgerl` command dispatcher: picks the command by its leading words, loads only that command's module,
// parses flags strictly, prints --help (also as `help <command>`) and --version, and turns every failure
// into one line on stderr with a non-zero exit.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type CommandInput, UsageError } from './command.ts';
import { type CommandEntry, commands, findCommand } from './commands.ts';
import { errorMessageWithCause } from '../protocol/error-message.ts';
import { redactSecrets } from '../protocol/redact-secrets.ts';
import { deprecationLine, withCurrentFlags, withCurrentVariables } from '../protocol/config-renames.ts';

export async function main(argv: string[], io: Partial<CommandInput> = {}): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  const env = io.env ?? process.env;
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
    stdout.write(`edgerl ${packageVersion()}\n`);
    return 0;
  }
  // `edgerl help db migrate` is `edgerl db migrate --help`, as git and npm read it.
  if (argv[0] === 'help' && argv.length > 1) return main([...argv.slice(1), '--help'], io);
  const entry = findCommand(argv);
  if (!entry) {
    if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
      stdout.write(overview());
      return argv.length === 0 ? 2 : 0;
    }
    const group = commands.filter((c) => c.name.length > 1 && c.name[0] === argv[0]);
    if (group.length > 0) {
      // A command group (`edgerl ab`, `edgerl db`): list its subcommands.
      const asksHelp = argv[1] === '--help' || argv[1] === '-h';
      if (argv.length > 1 && !asksHelp) {
        stderr.write(
          `edgerl: unknown command "${argv.join(' ')}"; run "edgerl ${argv[0]} --help" for the list\n`,
        );
        return 2;
      }
      stdout.write(listing(`Usage: edgerl ${argv[0]} <command> [options]`, group));
      return asksHelp ? 0 : 2;
    }
    stderr.write(`edgerl: unknown command "${argv.join(' ')}"; run "edgerl --help" for the list\n`);
    return 2;
  }
  const rest = argv.slice(entry.name.length);
  try {
    const command = await entry.load();
    if (rest.includes('--help') || rest.includes('-h')) {
      stdout.write(`${command.usage.trimEnd()}\n`);
      return 0;
    }
    // Former variable and flag names read as the current ones, with one line saying so (config-renames.ts).
    const current = withCurrentVariables(env);
    const flags = withCurrentFlags(rest, new Set(Object.keys(command.options)));
    const deprecated = deprecationLine([...current.renamed, ...flags.renamed]);
    if (deprecated) stderr.write(`edgerl ${entry.name.join(' ')}: ${deprecated}\n`);
    const parsed = parseArgs({
      args: flags.args,
      options: command.options,
      allowPositionals: command.positionals ?? false,
      strict: true,
    });
    const code = await command.run({
      values: parsed.values,
      positionals: parsed.positionals,
      env: current.env,
      stdout,
      stderr,
    });
    return code ?? 0;
  } catch (error) {
    const usage = error instanceof UsageError || isParseArgsError(error);
    stderr.write(`edgerl ${entry.name.join(' ')}: ${oneLine(error)}\n`);
    if (env.EDGERL_DEBUG && error instanceof Error && error.stack)
      stderr.write(`${redactSecrets(error.stack)}\n`);
    return usage ? 2 : 1;
  }
}

/** The version in the package.json this CLI ships in (read once, when asked). */
function packageVersion(): string {
  const file = new URL('../package.json', import.meta.url);
  const { version } = JSON.parse(readFileSync(file, 'utf8')) as { version: string };
  return version;
}

function overview(): string {
  return `edgerl: agentic RL for TypeScript teams\n\n${listing('Usage: edgerl <command> [options]', commands)}`;
}

function listing(usage: string, list: readonly CommandEntry[]): string {
  const width = Math.max(...list.map((c) => c.name.join(' ').length));
  const lines = list.map((c) => `  ${c.name.join(' ').padEnd(width)}  ${c.summary}`);
  return [`${usage}   (every command takes --help; edgerl --version)`, '', 'Commands:', ...lines, ''].join(
    '\n',
  );
}

function isParseArgsError(error: unknown): boolean {
  return error instanceof Error && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS');
}

/** The error as one line, credentials masked (a driver's message may quote a connection string). */
function oneLine(error: unknown): string {
  const message = redactSecrets(errorMessageWithCause(error));
  return message.replace(/\s*\n\s*/g, ' ').trim();
}
