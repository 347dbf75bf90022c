import { createHash } from "node:crypto";
import { encodePng } from "./png";

/**
 * A GitHub-style identicon: a mirrored 5×5 pattern in a colour derived from the seed.
 * Hearth draws default avatars itself instead of linking to Gravatar, so avatars work
 * on a network without internet access and no address leaves the server.
 */
export function identiconPng(seed: string, size: number): Uint8Array {
  const digest = createHash("sha256").update(seed).digest();
  const hue = (digest[0] * 360) / 256;
  const [r, g, b] = hslToRgb(hue, 0.55, 0.5);
  const background = [0xf0, 0xf0, 0xf0];
  const cells = 5;
  const margin = Math.round(size / 12);
  const cell = (size - 2 * margin) / cells;
  const on: boolean[][] = [];
  for (let row = 0; row < cells; row++) {
    on.push([]);
    for (let col = 0; col < cells; col++) {
      const mirrored = col < 3 ? col : cells - 1 - col;
      on[row].push((digest[1 + row * 3 + mirrored] & 1) === 1);
    }
  }
  const rgb = new Uint8Array(size * size * 3);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const col = Math.floor((x - margin) / cell);
      const row = Math.floor((y - margin) / cell);
      const filled = row >= 0 && row < cells && col >= 0 && col < cells && on[row][col];
      const i = (y * size + x) * 3;
      if (filled) rgb.set([r, g, b], i);
      else rgb.set(background, i);
    }
  }
  return encodePng(size, size, rgb);
}

function hslToRgb(h: number, s: number, l: number): [number, number, number] {
  const c = (1 - Math.abs(2 * l - 1)) * s;
  const x = c * (1 - Math.abs(((h / 60) % 2) - 1));
  const m = l - c / 2;
  const [r, g, b] = h < 60 ? [c, x, 0] : h < 120 ? [x, c, 0] : h < 180 ? [0, c, x] : h < 240 ? [0, x, c] : h < 300 ? [x, 0, c] : [c, 0, x];
  return [Math.round((r + m) * 255), Math.round((g + m) * 255), Math.round((b + m) * 255)];
}
