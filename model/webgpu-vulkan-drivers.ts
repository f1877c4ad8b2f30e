// Whether a Vulkan driver is installed at all, checked the way the Vulkan loader finds drivers on Linux
// (ICD manifests: VK_DRIVER_FILES / VK_ICD_FILENAMES, else */vulkan/icd.d/*.json under the XDG config
// and data directories; LunarG loader docs, "Driver Discovery on Linux"). Without one, starting Dawn only
// prints loader errors, so the backend search skips webgpu with a reason instead. Leaves out whether a
// manifest's driver matches a GPU: Dawn decides that.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The loader's default search roots when the XDG variables are unset (its sysconfdir and datadirs). */
const defaultConfigDirs = ['/etc/xdg', '/etc'];
const defaultDataDirs = ['/usr/local/share', '/usr/share'];

/**
 * ICD manifests the loader would consider: the files named by VK_DRIVER_FILES or VK_ICD_FILENAMES
 * (`:`-separated, taken as given), else every *.json in <dir>/vulkan/icd.d. Empty: no driver installed.
 * Only meaningful on Linux; `env` is passed in so the entry point's environment is the one used.
 */
export function vulkanDriverManifests(env: Readonly<Record<string, string | undefined>>): string[] {
  const named = env.VK_DRIVER_FILES || env.VK_ICD_FILENAMES;
  if (named) return named.split(':').filter((path) => path !== '');
  const split = (value: string | undefined, fallback: string[]) =>
    value ? value.split(':').filter((dir) => dir !== '') : fallback;
  const home = env.HOME;
  const roots = [
    ...(env.XDG_CONFIG_HOME ? [env.XDG_CONFIG_HOME] : home ? [join(home, '.config')] : []),
    ...split(env.XDG_CONFIG_DIRS, defaultConfigDirs),
    ...(env.XDG_DATA_HOME ? [env.XDG_DATA_HOME] : home ? [join(home, '.local/share')] : []),
    ...split(env.XDG_DATA_DIRS, defaultDataDirs),
  ];
  const found: string[] = [];
  for (const root of new Set(roots)) {
    const dir = join(root, 'vulkan', 'icd.d');
    try {
      for (const entry of readdirSync(dir)) if (entry.endsWith('.json')) found.push(join(dir, entry));
    } catch {
      // No such directory: nothing installed there.
    }
  }
  return found;
}
