/**
 * The web client's bundle as the compiled executable carries it. Running from source
 * this is null and web/bundle.ts builds the client on first use; scripts/build.ts
 * builds the client first and substitutes this module's contents with the result.
 */

export interface WebBundle {
  /** Public file names: `app.<hash>.js`, `app.<hash>.css`. */
  jsName: string;
  cssName: string;
  js: string;
  css: string;
}

export const EMBEDDED_WEB_BUNDLE: WebBundle | null = null;
