// A job's credentials (option `auth`) at rest: sealed under the server's secret key with the job id
// as additional data (a sealed value copied to another job's row does not open there), kept in the
// job's own `credentials` column while the job may still crawl, and erased by the store when it
// ends. The row's `options` hold them redacted. The process that runs the job, the first or one
// that continues it, opens them in memory for its crawl only.
import type { CrawlAuth } from "../crawler/index.ts";
import { open, seal } from "../secrets/sealed-box.ts";
import type { SecretKeys } from "../secrets/secret-key.ts";

/** POST /api/jobs with `auth` on a server that cannot keep it (PostgreSQL without --secret-key-file): 400 before admission. */
export const AUTH_NEEDS_KEY_MESSAGE = "auth needs --secret-key-file on this server.";

export interface JobCredentials {
  /** False when credentials cannot be kept here: jobs with `auth` are refused. */
  readonly available: boolean;
  seal(jobId: string, auth: CrawlAuth): Promise<string>;
  /** The job's credentials, or null when this process cannot open them (no key, another key, or changed bytes). */
  open(jobId: string, sealed: string): Promise<CrawlAuth | null>;
}

export function jobCredentials(keys: SecretKeys): JobCredentials {
  return {
    available: keys.available,
    async seal(jobId, auth) {
      const key = await keys.key(true);
      if (key === null) throw new Error("no secret key to seal credentials with");
      return seal(key, JSON.stringify(auth), `genapi job ${jobId}`);
    },
    async open(jobId, sealed) {
      const key = await keys.key(false);
      if (key === null) return null;
      try {
        return JSON.parse(await open(key, sealed, `genapi job ${jobId}`)) as CrawlAuth;
      } catch {
        return null;
      }
    },
  };
}

/** A job whose credentials did not open here fails with this (never a value in it). */
export const credentialsUnreadable = (url: string) =>
  `Could not crawl ${url}: its credentials cannot be decrypted on this server (is --secret-key-file the same on every instance?)`;

/** For tests and a server with no way to keep credentials. */
export const noJobCredentials: JobCredentials = {
  available: false,
  seal: () => Promise.reject(new Error("credentials cannot be kept on this server")),
  open: async () => null,
};
