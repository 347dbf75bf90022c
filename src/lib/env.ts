/** A positive number from the environment; the fallback when unset or not a positive number. */
export function envNumber(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return process.env[name] !== undefined && Number.isFinite(v) && v > 0 ? v : fallback;
}
