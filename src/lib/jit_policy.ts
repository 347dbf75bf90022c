/**
 * The compiled executable starts with JavaScriptCore's tier-up thresholds scaled up
 * (scripts/build.ts `START_JIT_POLICY`), so the run-once code of a start (module
 * evaluation, the TypeBox schemas built at import, opening the store) stays in the
 * interpreter rather than being compiled by the JIT for nothing. `serve` calls this once
 * it listens and has written the folder's pending rows (src/lib/startup_pages.ts
 * `settleStart`, at most a second after listening), every other command and the worker
 * threads at once: from then on the JIT works as usual. Running from source the policy
 * is already the normal one.
 */
export function useNormalJitPolicy(): void {
  Bun.unsafe.setJITPolicy(1);
}
