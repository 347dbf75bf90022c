import { constants } from "node:fs";
import { lstat, open, type FileHandle } from "node:fs/promises";

/**
 * Files of the data folder are taken as they are, never through a link: a link
 * planted there (by whoever can write the folder) must not make the server read,
 * append to or serve a file elsewhere on the machine.
 */
export async function isRegularFile(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isFile();
  } catch {
    return false;
  }
}

/** Opens a regular file for appending, failing (ELOOP) on a link instead of following it. */
export async function openToAppend(path: string): Promise<FileHandle> {
  const handle = await open(path, constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW);
  if (!(await handle.stat()).isFile()) {
    await handle.close();
    throw Object.assign(new Error(`${path} is not a regular file`), { code: "ENOTREG" });
  }
  return handle;
}
