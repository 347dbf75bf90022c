/**
 * Lowers the calling thread's CPU priority (Linux nice value) so background work runs
 * on CPU time requests leave idle. Best effort: elsewhere, or without glibc, it does
 * nothing and says so.
 */
export function lowerThisThreadsPriority(nice = 19): boolean {
  if (process.platform !== "linux") return false;
  try {
    const { dlopen, FFIType } = require("bun:ffi") as typeof import("bun:ffi");
    const libc = dlopen("libc.so.6", {
      gettid: { args: [], returns: FFIType.i32 },
      setpriority: { args: [FFIType.i32, FFIType.u32, FFIType.i32], returns: FFIType.i32 },
    });
    try {
      // PRIO_PROCESS with a thread ID sets that one thread's nice value on Linux.
      const PRIO_PROCESS = 0;
      return libc.symbols.setpriority(PRIO_PROCESS, libc.symbols.gettid(), nice) === 0;
    } finally {
      libc.close();
    }
  } catch {
    return false;
  }
}
