/**
 * The web client's bundle as the compiled executable carries it. Running from source
 * this is null and web/bundle.ts builds the client on first use; scripts/build.ts
 * builds the client first and substitutes this module's contents with the result.
 *
 * A function, not a constant: the bundle's text is all string
 * constants, which a top-level constant would put on the heap of every server at
 * start; inside a function they stay in the executable's bytecode until a browser
 * first asks for the web client.
 */

export interface WebBundle {
  /** Public file names: `app.<hash>.js`, `app.<hash>.css`. */
  jsName: string;
  cssName: string;
  js: string;
  css: string;
}

export const embeddedWebBundle: (() => WebBundle) | null = null;
