// The command line: `genapi serve`, `genapi keys ...`, --help, --version. Every bad flag or
// value ends in one line on stderr naming it, and exit code 2.
import { parseArgs, type ParseArgsConfig } from "node:util";
import {
  crawlCommandOptions,
  crawlOptionHelp,
  dbOption,
  optionHelp,
  parseArgsOptions,
  resolveCrawlCommandConfig,
  resolveOptions,
  resolveServeConfig,
  serveOptions,
  UsageError,
} from "./config/config.ts";
import { processCrawlIo, runCrawlCommand } from "./commands/crawl.ts";
import { openStore } from "./open-store.ts";
import { redactSpec, scrub, StoreOpenError, StoreUnavailableError, type Store } from "./db/store.ts";
import { MAX_DAILY_LIMIT, validateDailyLimit, validateKeyName, type KeyRecord } from "./keys/key-store.ts";
import { didYouMean } from "./config/did-you-mean.ts";
import { ListenError, startServer } from "./server.ts";
import { SecretKeyError } from "./secrets/secret-key.ts";
import { VERSION } from "./config/version.ts";

export interface CliIo {
  env: Record<string, string | undefined>;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export const USAGE = `genapi ${VERSION}: password and sitemap generator API in one executable

Usage:
  genapi crawl URL [options]              crawl a site and write its sitemap (genapi crawl --help)
  genapi serve [options]                  serve the API (Swagger UI at /swagger)
  genapi keys create --name NAME [--daily-limit N] [--db PATH]
                                          create an API key; prints only the key, once
  genapi keys list [--db PATH] [--json]   list keys (never the keys themselves)
  genapi keys revoke ID_OR_PREFIX [--db PATH]
  genapi --help | --version

Options of serve (a flag beats its environment variable):
${optionHelp()}

Keys without --daily-limit are free keys: the free tier's quota per client address per UTC day.
Keys with --daily-limit N are premium keys: N requests per UTC day for the key.`;

/** `-h` is `--help` for every command. */
const helpOption = { help: { type: "boolean", short: "h" } } as const;

const COMMANDS = ["crawl", "serve", "keys", "help", "--help", "--version"];
const KEYS_COMMANDS = ["create", "list", "revoke"];

function parse<const O extends NonNullable<ParseArgsConfig["options"]>>(args: string[], options: O, positionals = 0) {
  try {
    const parsed = parseArgs({ args, options, strict: true, allowPositionals: true });
    if (parsed.positionals.length > positionals) {
      throw new UsageError(`unexpected argument "${parsed.positionals[positionals]}"`);
    }
    return parsed;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    // node:util's messages are multi-line and mention internals; keep the first line.
    const message = String((error as Error).message)
      .split("\n")[0]!
      .replace(/\. To specify.*$/, "");
    // A mistyped long flag: name the known one it is closest to.
    const typed =
      (error as { code?: string }).code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" ? /^Unknown option '--([^']+)'/.exec(message)?.[1] : undefined;
    throw new UsageError(typed === undefined ? message : `${message}${didYouMean(typed, Object.keys(options), "--")}`);
  }
}

/** Runs one command; resolves with the exit code (serve resolves when the server has stopped). */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  try {
    const [command, ...rest] = argv;
    switch (command) {
      case undefined:
      case "help":
      case "--help":
      case "-h":
        io.stdout(`${USAGE}\n`);
        return command === undefined ? 2 : 0;
      case "--version":
      case "-v":
        io.stdout(`genapi ${VERSION}\n`);
        return 0;
      case "crawl":
        return await crawl(rest, io);
      case "serve":
        return await serve(rest, io);
      case "keys":
        return await keys(rest, io);
      default:
        throw new UsageError(`unknown command "${command}"${didYouMean(command, COMMANDS) || " (try genapi --help)"}`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`genapi: ${error.message}\n`);
      return 2;
    }
    if (error instanceof ListenError || error instanceof StoreOpenError || error instanceof SecretKeyError) {
      io.stderr(`genapi: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

export const CRAWL_USAGE = `Usage: genapi crawl URL [options]

Crawls the site at URL (its origin, as the API does) and writes its sitemap: no server, database
or key, and any address may be crawled (it runs with your own rights). A live progress line shows
on stderr while it is a terminal; a summary line (or, with --json, the crawl report) ends the run.
A result over 50,000 URLs or 50 MB needs --output (see below); without it the command exits 1.
Exit codes: 0 sitemap written (truncated or not), 1 crawl failed, 2 bad flag or value,
130 interrupted by Ctrl-C (what was found is written first).

Options (a flag beats its environment variable):
${crawlOptionHelp()}`;

async function crawl(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, { ...crawlCommandOptions(), ...helpOption }, 1);
  if (values.help) {
    io.stdout(`${CRAWL_USAGE}\n`);
    return 0;
  }
  return runCrawlCommand(positionals[0], resolveCrawlCommandConfig(values, io.env), processCrawlIo(io.env));
}

async function serve(args: string[], io: CliIo): Promise<number> {
  const { values } = parse(args, { ...serveOptions, ...helpOption });
  if (values.help) {
    io.stdout(`${USAGE}\n`);
    return 0;
  }
  const config = resolveServeConfig(values, io.env);
  const running = await startServer(config, { stdout: io.stdout, stderr: io.stderr });
  await new Promise<void>((resolve) => {
    const onSignal = (signal: string) => {
      io.stderr(`genapi: ${signal} received, finishing running requests\n`);
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
      running.stop().then(resolve);
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  });
  return 0;
}

const keyOptions = { ...parseArgsOptions({ db: dbOption }), ...helpOption };

export const KEYS_USAGE = `Usage:
  genapi keys create --name NAME [--daily-limit N] [--db PATH|URL]
      creates an API key and prints it, and only it, on stdout: it is shown this once
      (only its hash is stored). Without --daily-limit a free key: the free tier's quota
      per client address per UTC day. With --daily-limit N (1 to ${MAX_DAILY_LIMIT}) a premium
      key: N requests per UTC day for the key, from any address.
  genapi keys list [--json] [--db PATH|URL]
      lists the keys (id, name, prefix, daily limit, created, last used, revoked), never
      the keys themselves; --json prints them as a JSON array.
  genapi keys revoke ID_OR_PREFIX [--db PATH|URL]
      revokes a key, named by its id or by the first characters of the key.

Option of every keys command (a flag beats its environment variable):
${optionHelp({ db: dbOption })}`;

/**
 * Runs `fn` on the store named by --db / GENAPI_DB. Validation errors become usage errors (exit 2);
 * a store that cannot be opened or answer ends the command with one line (exit 1).
 */
async function withStore<T>(flags: Record<string, unknown>, io: CliIo, fn: (store: Store) => Promise<T>): Promise<T> {
  const spec = resolveOptions({ db: dbOption }, flags as never, io.env).db as string;
  const store = await openStore(spec, { purpose: "cli" });
  try {
    return await fn(store);
  } catch (error) {
    if (error instanceof Error && error.message.startsWith("--")) throw new UsageError(error.message);
    if (error instanceof StoreUnavailableError) throw new StoreOpenError(`cannot use database ${redactSpec(spec)}: it is ${error.problem}`);
    throw new StoreOpenError(`database error: ${scrub(String((error as Error)?.message ?? error).split("\n")[0]!, spec)}`);
  } finally {
    await store.close();
  }
}

const formatTime = (iso: string | null) => (iso ? iso.replace("T", " ").replace(/\.\d+Z$/, "Z") : "-");

function keyTable(records: KeyRecord[]): string {
  const rows = [
    ["ID", "NAME", "PREFIX", "DAILY LIMIT", "CREATED", "LAST USED", "REVOKED"],
    ...records.map((r) => [
      String(r.id),
      r.name,
      r.prefix,
      r.daily_limit === null ? "free" : String(r.daily_limit),
      formatTime(r.created_at),
      formatTime(r.last_used_at),
      formatTime(r.revoked_at),
    ]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

async function keys(args: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case "help":
    case "--help":
    case "-h":
      return keysHelp(io);
    case "create": {
      const { values } = parse(rest, { ...keyOptions, name: { type: "string" }, "daily-limit": { type: "string" } });
      if (values.help) return keysHelp(io);
      if (values.name === undefined) throw new UsageError("keys create needs --name NAME");
      // Every value is checked before the store opens: a bad one must not create a database.
      const name = usage(() => validateKeyName(values.name as string));
      const limitText = values["daily-limit"] as string | undefined;
      const dailyLimit =
        limitText === undefined
          ? null
          : usage(() => validateDailyLimit(/^\d+$/.test(limitText) ? Number(limitText) : Number.NaN), dailyLimitError(limitText));
      const { key, record } = await withStore(values, io, (store) => store.keys.create({ name, dailyLimit }, new Date()));
      io.stdout(`${key}\n`);
      io.stderr(
        `genapi: created key ${record.id} "${record.name}" (${record.prefix}..., ` +
          `${record.daily_limit === null ? "free tier" : `${record.daily_limit} requests per day`}). ` +
          "It is shown only this once.\n",
      );
      return 0;
    }
    case "list": {
      const { values } = parse(rest, { ...keyOptions, json: { type: "boolean" } });
      if (values.help) return keysHelp(io);
      const records = await withStore(values, io, (store) => store.keys.list());
      io.stdout(values.json ? `${JSON.stringify(records, null, 2)}\n` : `${keyTable(records)}\n`);
      return 0;
    }
    case "revoke":
      return revoke(rest, io);
    default:
      throw new UsageError(
        sub
          ? `unknown keys command "${sub}"${didYouMean(sub, KEYS_COMMANDS) || " (create, list, revoke)"}`
          : "keys needs a command: create, list or revoke",
      );
  }
}

const dailyLimitError = (text: string) => `--daily-limit must be an integer from 1 to ${MAX_DAILY_LIMIT} (got "${text}")`;

/** Runs a validation of the key store; its refusal (an Error naming the flag) becomes a usage error. */
function usage<T>(check: () => T, message?: string): T {
  try {
    return check();
  } catch (error) {
    throw new UsageError(message ?? (error as Error).message);
  }
}

function keysHelp(io: CliIo): number {
  io.stdout(`${KEYS_USAGE}\n`);
  return 0;
}

async function revoke(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, keyOptions, 1);
  if (values.help) return keysHelp(io);
  const target = positionals[0];
  if (!target) throw new UsageError("keys revoke needs an ID or key prefix");
  const result = await withStore(values, io, (store) => store.keys.revoke(target, new Date()));
  switch (result.status) {
    case "revoked":
      io.stderr(`genapi: revoked key ${result.record.id} "${result.record.name}" (${result.record.prefix}...)\n`);
      return 0;
    case "already_revoked":
      io.stderr(`genapi: key ${result.record.id} was already revoked at ${result.record.revoked_at}\n`);
      return 0;
    case "not_found":
      io.stderr(`genapi: no key matches "${target}"\n`);
      return 1;
    case "ambiguous":
      io.stderr(`genapi: "${target}" matches ${result.matches.length} keys (${result.matches.map((r) => r.id).join(", ")}); give the id\n`);
      return 1;
  }
}
