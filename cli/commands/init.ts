// `edgerl init [DIR]`: scaffolds an environment of your own outside edgerl's tree (cli/init/environment-scaffold.ts):
// the module `edgerl edge --environments` loads, its test and a README. Never overwrites a file.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { environmentScaffold } from '../init/environment-scaffold.ts';
import { defineCommand, stringFlag, UsageError } from '../command.ts';

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
    return 0;
  },
});
