import { createHash, randomInt, timingSafeEqual } from "node:crypto";

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** `length` characters drawn uniformly from `alphabet` by the crypto generator. */
export function randomToken(length: number, alphabet = ALPHANUMERIC): string {
  let token = "";
  for (let i = 0; i < length; i++) token += alphabet[randomInt(alphabet.length)];
  return token;
}

/** 32 random alphanumerics, like Zulip's API keys. */
export function generateApiKey(): string {
  return randomToken(32);
}

/** Compares secrets in time independent of where they differ (and of their lengths). */
export function secretsEqual(a: string, b: string): boolean {
  const da = createHash("sha256").update(a).digest();
  const db = createHash("sha256").update(b).digest();
  return timingSafeEqual(da, db);
}

/**
 * argon2id with 19 MiB and 2 passes (the OWASP minimum) rather than Bun's default
 * 64 MiB: a Raspberry Pi with 1 GB must survive a burst of logins, and the rate
 * limiter bounds guessing anyway.
 */
const HASH_OPTIONS = { algorithm: "argon2id", memoryCost: 19456, timeCost: 2 } as const;

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, HASH_OPTIONS);
}

export function hashPasswordSync(password: string): string {
  return Bun.password.hashSync(password, HASH_OPTIONS);
}

/** A hash no password matches, made once: checked against when there is no account or no password. */
let decoyHash: Promise<string> | null = null;

/**
 * Whether `password` matches `hash`. Without a hash (no such account, or one without a
 * password) it still hashes, against a decoy, so that the answer takes as long either
 * way: a login's timing must not tell which accounts exist (Django does the same).
 */
export async function verifyPassword(password: string, hash: string | null): Promise<boolean> {
  try {
    if (hash === null) {
      await Bun.password.verify(password, await (decoyHash ??= hashPassword(randomToken(32))));
      return false;
    }
    return await Bun.password.verify(password, hash);
  } catch {
    return false;
  }
}

export function randomPassword(): string {
  return generateApiKey().slice(0, 16);
}
