import { createHash, randomInt, timingSafeEqual } from "node:crypto";

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** 32 random alphanumerics, like Zulip's API keys. */
export function generateApiKey(): string {
  let key = "";
  for (let i = 0; i < 32; i++) key += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return key;
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

export async function verifyPassword(password: string, hash: string | null): Promise<boolean> {
  if (hash === null) return false;
  try {
    return await Bun.password.verify(password, hash);
  } catch {
    return false;
  }
}

export function randomPassword(): string {
  return generateApiKey().slice(0, 16);
}
