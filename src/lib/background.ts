/**
 * A timer's callback that cannot end the process: an exception thrown by a background
 * tick (or a promise it returns that rejects) is logged, and the next tick runs as
 * planned. Without it one bad record or a full disk met by a sweep would stop the
 * server for every user.
 */
export function guardedTick(name: string, tick: () => unknown): () => void {
  const report = (error: unknown) => console.error(`${name} failed (retried at its next tick):`, error);
  return () => {
    try {
      const result = tick();
      if (result instanceof Promise) result.catch(report);
    } catch (error) {
      report(error);
    }
  };
}
