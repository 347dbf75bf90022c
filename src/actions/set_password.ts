import type { Store } from "../store/db";
import { getUserByEmail, putUser } from "../store/users";
import { passwordLengthAllowed } from "../store/realm_settings";
import { hashPassword } from "../lib/credentials";

/**
 * `hearth set-password`: an owner's way to give an account a password from the
 * machine, for accounts that have none (an organization imported from Zulip, whose
 * exports carry no passwords) or whose owner forgot it. Run with the server stopped
 * (the CLI holds the data folder's lock); the account's API key is left as it is.
 */
export async function doSetPasswordFromCli(store: Store, email: string, password: string): Promise<{ id: number; email: string }> {
  if (!passwordLengthAllowed(password)) throw new Error("The password is too short or too long.");
  const hash = await hashPassword(password);
  return store.commit(() => {
    const user = getUserByEmail(store, email);
    if (!user || user.is_bot) throw new Error(`No user with the email ${email}.`);
    putUser(store, { ...user, password_hash: hash });
    return { id: user.id, email: user.email };
  });
}
