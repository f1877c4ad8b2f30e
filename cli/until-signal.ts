// Resolves at the first SIGINT or SIGTERM, then stops listening: how the long-running commands
// (edge, serve-model, console) wait before closing what they started.
export function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
