// Shared by the model benches: `--backend NAME` (or `--backend=NAME`; else EDGERL_BACKEND) picks the
// tfjs backend, as the CLI's flag does. Only bench scripts read argv and the environment.
import { type SelectedBackend, selectBackend } from '../model/backend.ts';
import { backendFlagHelp } from '../model/backend-names.ts';

/** The value of `--name VALUE` or `--name=VALUE` in argv, if present. */
export function flagValue(name: string, argv: readonly string[] = process.argv.slice(2)): string | undefined {
  for (const [index, arg] of argv.entries()) {
    if (arg === `--${name}`) {
      const value = argv[index + 1];
      if (value === undefined || value.startsWith('--')) throw new Error(`--${name} needs a value`);
      return value;
    }
    if (arg.startsWith(`--${name}=`)) return arg.slice(name.length + 3);
  }
  return undefined;
}

/** The backend a bench asked for: the flag first, then EDGERL_BACKEND; undefined = first available. */
export function backendFromArgs(
  argv: readonly string[] = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  return flagValue('backend', argv) ?? (env.EDGERL_BACKEND || undefined);
}

/** Selects (and prints) the backend named by --backend / EDGERL_BACKEND. */
export async function selectBenchBackend(): Promise<SelectedBackend> {
  return selectBackend({ requested: backendFromArgs() });
}

export const backendFlagUsage = `--backend ${backendFlagHelp}`;
