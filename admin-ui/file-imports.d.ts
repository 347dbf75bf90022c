// Bun resolves `import x from "./a.svg" with { type: "file" }` to the file's path.
declare module "*.svg" {
  const path: string;
  export default path;
}
declare module "*.css" {
  const path: string;
  export default path;
}
