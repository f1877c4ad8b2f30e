// Test projects: `node` runs unit, integration (embedded PGlite, or the server named by
// EDGERL_TEST_DATABASE_URL) and end-to-end tests. Worker tests in workerd join as their own project.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'node',
          environment: 'node',
          include: ['{protocol,db,edge,trainer,cli,test}/**/*.test.ts'],
          exclude: ['node_modules/**', 'test/workerd/**'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
