// Driver-manifest discovery on a temporary tree standing in for /etc and /usr/share.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { vulkanDriverManifests } from './webgpu-vulkan-drivers.ts';

const root = mkdtempSync(join(tmpdir(), 'edgerl-vk-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('vulkanDriverManifests', () => {
  it('takes VK_DRIVER_FILES, then VK_ICD_FILENAMES, as given', () => {
    expect(
      vulkanDriverManifests({ VK_DRIVER_FILES: '/a.json:/b.json', VK_ICD_FILENAMES: '/c.json' }),
    ).toEqual(['/a.json', '/b.json']);
    expect(vulkanDriverManifests({ VK_ICD_FILENAMES: '/c.json' })).toEqual(['/c.json']);
  });

  it('lists *.json under <XDG dir>/vulkan/icd.d, and nothing when no driver is installed', () => {
    const data = join(root, 'share');
    const config = join(root, 'etc');
    mkdirSync(join(data, 'vulkan', 'icd.d'), { recursive: true });
    mkdirSync(join(config, 'vulkan', 'icd.d'), { recursive: true });
    const env = { XDG_DATA_DIRS: data, XDG_CONFIG_DIRS: config, HOME: join(root, 'home') };
    expect(vulkanDriverManifests(env)).toEqual([]);
    writeFileSync(join(data, 'vulkan', 'icd.d', 'lvp_icd.json'), '{}');
    writeFileSync(join(data, 'vulkan', 'icd.d', 'README'), 'not a manifest');
    writeFileSync(join(config, 'vulkan', 'icd.d', 'nvidia_icd.json'), '{}');
    expect(vulkanDriverManifests(env)).toEqual([
      join(config, 'vulkan', 'icd.d', 'nvidia_icd.json'),
      join(data, 'vulkan', 'icd.d', 'lvp_icd.json'),
    ]);
  });
});
