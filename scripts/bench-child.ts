/**
 * The benchmarks run each server in a child process, which announces itself with one
 * JSON line on stdout (its URL and what the clients need): this reads that line.
 */
export async function readAnnouncement<T>(stdout: ReadableStream<Uint8Array>, name: string): Promise<T> {
  const reader = stdout.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${name} exited before announcing itself`);
    text += decoder.decode(value, { stream: true });
  }
  reader.releaseLock();
  return JSON.parse(text.slice(0, text.indexOf("\n"))) as T;
}
