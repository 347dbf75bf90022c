/**
 * The test command (`npm test`): the type check, then every `bun test` file, then
 * one closing line `N passed, N failed` that CI reads. Extra arguments go to
 * `bun test` (e.g. `npm test -- test/api/users.test.ts`).
 */
export {};

const args = process.argv.slice(2);
let passed = 0;
let failed = 0;

async function run(cmd: string[]): Promise<{ code: number; output: string }> {
  const proc = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe", env: process.env });
  let output = "";
  const pump = async (stream: ReadableStream<Uint8Array>, sink: NodeJS.WriteStream) => {
    const decoder = new TextDecoder();
    const reader = stream.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const text = decoder.decode(value, { stream: true });
      output += text;
      sink.write(text);
    }
  };
  await Promise.all([pump(proc.stdout, process.stdout), pump(proc.stderr, process.stderr)]);
  return { code: await proc.exited, output };
}

if (args.length === 0) {
  console.log("== type check (tsc --noEmit)");
  const tsc = await run(["node_modules/.bin/tsc", "--noEmit", "-p", "."]);
  if (tsc.code === 0) {
    passed++;
    console.log("type check: ok");
  } else {
    failed++;
    console.log("type check: FAILED");
  }
}

console.log("== bun test");
const result = await run([process.execPath, "test", "--timeout", "60000", ...args]);
const pass = /^\s*(\d+) pass\s*$/m.exec(result.output);
const fail = /^\s*(\d+) fail\s*$/m.exec(result.output);
passed += pass ? Number(pass[1]) : 0;
failed += fail ? Number(fail[1]) : 0;
if (result.code !== 0 && !fail) failed++; // the runner itself failed (e.g. a file did not load)

console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
