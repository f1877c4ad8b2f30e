// The test database from inside workerd: the Neon driver through the Node side's WebSocket-to-TCP
// tunnel (global-setup.ts), for tests that seed or read rows the Worker under test works on.
import { inject } from 'vitest';
import { openNeonStore } from '../../db/drivers/open-neon-store.ts';

export function openWorkerdTestStore() {
  const context = inject('workerd');
  return openNeonStore({
    url: context.databaseUrl,
    neon: {
      wsProxy: (host, port) => `${context.tunnel}/v2?address=${host}:${port}`,
      useSecureWebSocket: false,
      pipelineTLS: false,
      pipelineConnect: false,
    },
  });
}
