// The one store interface: keys, usage counters, crawl jobs and sites, on the embedded SQLite file or a
// shared PostgreSQL database. Routes, the CLI and the job runner see only this; which backend runs
// is decided once, by the form of `--db` (open-store.ts). Each backend's SQL and migrations are in
// its own folder (src/db/sqlite/, src/db/postgres/); rows.ts maps the rows both return.
import { hostname } from "node:os";
import type { HostCoordinator } from "../crawler/index.ts";
import type { JobStore } from "../jobs/job-store.ts";
import type { SiteStore } from "../sites/site-store.ts";
import type { KeyStore } from "../keys/key-store.ts";
import type { QuotaStore } from "../quota/quota.ts";

export type { KeyStore } from "../keys/key-store.ts";
export type { QuotaStore } from "../quota/quota.ts";
export { type StoreProblem, StoreUnavailableError } from "../http/store-errors.ts";

export interface Store {
  readonly kind: "sqlite" | "postgres";
  readonly keys: KeyStore;
  readonly quota: QuotaStore;
  /** The job statements of requests: they answer 503 within ~2 s rather than wait (see Operations). */
  readonly jobs: JobStore;
  /** Politeness toward crawled hosts, shared by every process on the store (its own owner inside). */
  readonly hosts: HostCoordinator;
  /**
   * The same statements for work off the request path (the runner, checkpoints, publishing,
   * callbacks, retention), with BACKGROUND_DEADLINE_MS instead: a checkpoint slower than a
   * request may take is not a lost lease.
   */
  readonly backgroundJobs: JobStore;
  /** Sites (src/sites/): the statements of requests, and those of the scheduler and the runs (background deadline). */
  readonly sites: SiteStore;
  readonly backgroundSites: SiteStore;
  /** True when a write can be made now (one is made and rolled back), answered within ~2 s. */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}

/** How long one store call of background work may wait for a lock or a slow server before it fails. */
export const BACKGROUND_DEADLINE_MS = 30_000;

/**
 * One step of a backend's schema (src/db/sqlite/migrations.ts, src/db/postgres/migrations.ts).
 * A database records the last step it has run; steps are append-only: never edit one that has shipped.
 */
export interface Migration {
  version: number;
  description: string;
  sql: string;
}

/** The store could not be opened at start; the message is one line naming it and the reason. */
export class StoreOpenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreOpenError";
  }
}

export interface OpenOptions {
  /** serve: short lock waits (503 instead of blocking) and the start-up retry on PostgreSQL. */
  purpose: "serve" | "cli";
  /** PostgreSQL: how long `serve` keeps retrying the first connection (ms). */
  connectRetryMs?: number;
  /** Progress worth telling an operator (the start-up retry); one message, no newline. */
  log?: (message: string) => void;
}

export function isPostgresUrl(spec: string): boolean {
  return /^postgres(ql)?:\/\//i.test(spec);
}

/** The spec as it may be shown: a URL's password replaced by `***`. */
export function redactSpec(spec: string): string {
  if (!isPostgresUrl(spec)) return spec;
  return spec.replace(/^(postgres(?:ql)?:\/\/[^:@/]*:)[^@/]*@/i, "$1***@");
}

/** Removes every occurrence of `secret` (the URL's password, raw or percent-decoded) from `text`. */
export function scrub(text: string, spec: string): string {
  const match = /^postgres(?:ql)?:\/\/[^:@/]*:([^@/]*)@/i.exec(spec);
  if (!match || match[1] === "") return text;
  let out = text.split(spec).join(redactSpec(spec));
  for (const secret of new Set([match[1]!, safeDecode(match[1]!)])) out = out.split(secret).join("***");
  return out;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** This process's name in shared tables (leases of jobs and hosts): readable, and unique per process. */
export function processOwner(): string {
  return `${hostname()}:${process.pid}:${Buffer.from(crypto.getRandomValues(new Uint8Array(6))).toString("base64url")}`;
}
