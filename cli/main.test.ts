import { readFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from './main.ts';

async function run(args: string[]) {
  let out = '';
  let err = '';
  const stream = (append: (text: string) => void) =>
    new Writable({
      write(chunk, _encoding, done) {
        append(String(chunk));
        done();
      },
    });
  const code = await main(args, {
    stdout: stream((t) => {
      out += t;
    }),
    stderr: stream((t) => {
      err += t;
    }),
    env: {},
  });
  return { code, out, err };
}

describe('edgerl dispatcher', () => {
  it('lists every command on --help and exits 0', async () => {
    const { code, out } = await run(['--help']);
    expect(code).toBe(0);
    expect(out).toContain('db migrate');
    expect(out).toContain('serve-model');
  });

  it('lists a command group on `edgerl db --help`', async () => {
    const { code, out } = await run(['db', '--help']);
    expect(code).toBe(0);
    expect(out).toContain('Usage: edgerl db <command>');
    expect(out).toContain('db migrate');
    expect(out).not.toContain('serve-model');
  });

  it('rejects unknown commands and flags with one line on stderr and exit 2', async () => {
    const unknown = await run(['db', 'explode']);
    expect(unknown.code).toBe(2);
    expect(unknown.err.trim().split('\n')).toHaveLength(1);
    expect(unknown.err).toContain('db explode');
    const badFlag = await run(['sql', '--bogus']);
    expect(badFlag.code).toBe(2);
    expect(badFlag.err).toMatch(/^edgerl sql: .*--bogus/);
  });

  it('prints the package version on --version and -v', async () => {
    const { version } = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    for (const flag of ['--version', '-v']) {
      const { code, out } = await run([flag]);
      expect(code).toBe(0);
      expect(out).toBe(`edgerl ${version}\n`);
    }
  });

  it("reads `help <command>` as the command's --help, and a group's listing", async () => {
    const direct = await run(['db', 'migrate', '--help']);
    const viaHelp = await run(['help', 'db', 'migrate']);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.out).toBe(direct.out);
    expect(viaHelp.out).not.toContain('Commands:');
    const group = await run(['help', 'db']);
    expect(group.code).toBe(0);
    expect(group.out).toContain('Usage: edgerl db <command>');
    const unknown = await run(['help', 'explode']);
    expect(unknown.code).toBe(2);
  });
});
