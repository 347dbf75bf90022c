import { encodePng } from "./png";

/**
 * Hearth's own drawing for the `zulip` emoji: a white Z on a round ember-coloured
 * badge, 64 pixels square. Drawn rather than shipped as a file (the picture is
 * not Zulip's logo; clients only need an image at that address).
 */
export function zulipEmojiPng(): Uint8Array {
  const size = 64;
  const rgb = new Uint8Array(size * size * 3).fill(255);
  const set = (x: number, y: number, [r, g, b]: readonly number[]) => rgb.set([r, g, b], (y * size + x) * 3);
  const ember = [0xd9, 0x5f, 0x22] as const;
  const white = [0xff, 0xff, 0xff] as const;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const dx = x - 31.5;
      const dy = y - 31.5;
      if (dx * dx + dy * dy > 31 * 31) continue;
      // The Z: a top and a bottom bar, and the diagonal between their ends.
      const bar = x >= 18 && x <= 45 && ((y >= 17 && y <= 22) || (y >= 41 && y <= 46));
      const diagonal = y > 22 && y < 41 && Math.abs(x - (45 - ((y - 22) * 27) / 19)) <= 3.5;
      set(x, y, bar || diagonal ? white : ember);
    }
  }
  return encodePng(size, size, rgb);
}
