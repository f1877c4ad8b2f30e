// The console's static files, served from the embedded module (no file system on Workers).
import { Hono } from 'hono';
import { embeddedAssets } from '../assets/embedded-assets.ts';
import type { ConsoleEnv } from '../console-env.ts';
import type { ConsoleAsset } from '../links.ts';

const names = Object.keys(embeddedAssets) as ConsoleAsset[];

export function assetRoutes() {
  return new Hono<ConsoleEnv>().get('/:name', (c) => {
    const name = names.find((candidate) => candidate === c.req.param('name'));
    if (!name) return c.text('no such asset', 404);
    const asset = embeddedAssets[name];
    // Five minutes: long enough to spare reloads, short enough that an upgrade shows soon.
    return c.body(asset.body, 200, {
      'content-type': asset.contentType,
      'cache-control': 'public, max-age=300',
    });
  });
}
