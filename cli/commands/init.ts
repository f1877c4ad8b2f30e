// `edgerl init [DIR]`: scaffolds an environment of your own outside edgerl's tree (cli/init/environment-scaffold.ts):
// the module `edgerl edge --environments` loads, its test and a README. Never overwrites a file.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { environmentScaffold } from '../init/environment-scaffold.ts';
import { defineCommand, stringFlag, UsageError } from '../command.ts';

/** The packages the scaffold's environments.ts imports. */
const importedPackages = ['edgerl', 'zod'] as const;

/** Whether Node's resolution from `dir` would find `name`: a node_modules/<name> in it or a folder above. */
function installedAbove(dir: string, name: string): boolean {
  for (let current = dir; ; current = dirname(current)) {
    if (existsSync(join(current, 'node_modules', name, 'package.json'))) return true;
    if (dirname(current) === current) return false;
  }
}

/** As defineEnvironment checks it (edge/environments/environment.ts). */
const namePattern = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

export const initCommand = defineCommand({
  usage: `Usage: edgerl init [DIR] [--name NAME]

Writes an environment of your own into DIR (default: the current directory): environments.ts (the
environment, made with defineEnvironment from edgerl/environment), environments.test.ts (one
episode against a scripted policy, for vitest), README.md, and a package.json with "type": "module"
where there is none (an existing one is left alone). Refuses if any of the others exists.
Serve it with \`edgerl edge --environments DIR/environments.ts\` (docs/environments.md).

Options:
  --name NAME   the environment's name, kebab-case (default reverse-word)`,
  options: { name: { type: 'string' } },
  positionals: true,
  async run({ values, positionals, stdout }) {
    if (positionals.length > 1) throw new UsageError(`one directory at most, got ${positionals.length}`);
    const dir = positionals[0] ?? '.';
    const name = stringFlag(values, 'name') ?? 'reverse-word';
    if (!namePattern.test(name))
      throw new UsageError(`--name must be kebab-case (e.g. "reverse-word"), got "${name}"`);
    const files = environmentScaffold(name);
    const existing = files
      .filter((file) => !file.onlyIfAbsent)
      .map((file) => join(dir, file.path))
      .filter((path) => existsSync(path));
    if (existing.length > 0) {
      throw new UsageError(`${existing.join(', ')} already exist(s); edgerl init overwrites nothing`);
    }
    await mkdir(dir, { recursive: true });
    const written = files.filter((file) => !(file.onlyIfAbsent && existsSync(join(dir, file.path))));
    // 'wx' fails on a file created since the check, rather than overwriting it.
    for (const file of written) await writeFile(join(dir, file.path), file.text, { flag: 'wx' });
    stdout.write(
      `wrote ${written.map((file) => join(dir, file.path)).join(', ')}\n` +
        `next: edgerl edge --environments ${join(dir, 'environments.ts')} (docs/environments.md)\n`,
    );
    // The edge imports the module from DIR, so the packages it imports must resolve from there.
    const missing = importedPackages.filter((name) => !installedAbove(resolve(dir), name));
    if (missing.length > 0) {
      stdout.write(
        `note: environments.ts imports ${missing.join(' and ')}, which ${dir} cannot find: npm install ${missing.join(' ')}\n`,
      );
    }
    return 0;
  },
});
