import pkg from "../../package.json" with { type: "json" };

/** The release, taken from package.json at build time. */
export const VERSION: string = pkg.version;
export const USER_AGENT = `genapi/${VERSION}`;
