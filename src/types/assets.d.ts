// Files imported `with { type: "file" }` resolve to their path (inside the executable once compiled).
declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const path: string;
  export default path;
}
declare module "swagger-ui-dist/swagger-ui.css" {
  const path: string;
  export default path;
}
