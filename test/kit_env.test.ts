/**
 * The test kit's withEnv (test/kit/index.ts): servers started together with settings
 * leave none behind, whichever start ends first (a setting left behind reaches every
 * later server of the same test process).
 */
import { expect, test } from "bun:test";
import { withEnv } from "./kit";

const NAME = "HEARTH_KIT_ENV_PROBE";

/** Two overlapping starts that see the setting, ending in the given order. */
async function overlapping(firstEndsFirst: boolean): Promise<void> {
  const ends: (() => void)[] = [];
  const start = () => new Promise<string | undefined>((resolve) => ends.push(() => resolve(process.env[NAME])));
  const a = withEnv({ [NAME]: "a" }, start);
  const b = withEnv({ [NAME]: "b" }, start);
  expect(ends.length).toBe(2);
  const order = firstEndsFirst ? [0, 1] : [1, 0];
  ends[order[0]]();
  await (order[0] === 0 ? a : b);
  ends[order[1]]();
  await Promise.all([a, b]);
}

for (const firstEndsFirst of [true, false]) {
  test(`overlapping starts, the ${firstEndsFirst ? "first" : "second"} ending first, leave no setting behind`, async () => {
    delete process.env[NAME];
    await overlapping(firstEndsFirst);
    expect(process.env[NAME]).toBeUndefined();
  });

  test(`overlapping starts, the ${firstEndsFirst ? "first" : "second"} ending first, put back a value set before them`, async () => {
    process.env[NAME] = "before";
    try {
      await overlapping(firstEndsFirst);
      expect(process.env[NAME]).toBe("before");
    } finally {
      delete process.env[NAME];
    }
  });
}

test("a start sees its setting; a lone start puts back what was there", async () => {
  delete process.env[NAME];
  expect(await withEnv({ [NAME]: "x" }, async () => process.env[NAME])).toBe("x");
  expect(process.env[NAME]).toBeUndefined();
});
