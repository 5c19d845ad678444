// Politeness toward crawled hosts: one gate per host (lower-cased name and port) that every crawl of
// the process passes, below the address guard and above the HTTP client, for every request a crawl
// makes (pages, redirect hops, robots.txt, sitemaps). A gate holds at most `slots` requests in
// flight, starts them at least the host's interval apart (--host-delay, raised by robots.txt's
// Crawl-delay), and stops starting them while the host is paused after a 429 or 503.
//
// Several processes sharing one store share each host through a HostCoordinator (the store's host
// leases): a process holds some of the host's slots under a lease it renews while it has work and
// that expires when it dies; with an interval, it reserves its start times in blocks. Neither costs
// a round trip per request: a renewal a second per busy host, a reservation per block of starts.
// Without a coordinator (genapi crawl) the gate holds all of the host's slots itself.
//
// A crawl sees its own face of this: `open(settings)` gives it a fetch wrapper with its own lower
// limits (max_concurrency, delay_ms), its retries of throttled requests and its counts.
import ipaddr from "ipaddr.js";
import { isSettlingOnAbort, settlesOnAbort, timerDelay, untilAborted } from "./abort.ts";
import type { Answer } from "./answer.ts";
import { BODY_IN_MEMORY, discardBody } from "./body.ts";
import { retryAfterMs } from "./headers.ts";
import { ClientAnswer } from "./http1/answer.ts";
import type { ClientInit } from "./http1/request.ts";
import type { RequestQueue } from "./request.ts";

/** The server's (or genapi crawl's) limits per host. */
export interface PolitenessConfig {
  /** Requests in flight to one host, from every crawl sharing the store (--host-concurrency). */
  hostConcurrency: number;
  /** Least time between two request starts to one host (--host-delay), ms. */
  hostDelayMs: number;
}

export const defaultPolitenessConfig: PolitenessConfig = { hostConcurrency: 4, hostDelayMs: 0 };

/** robots.txt's Crawl-delay is honoured up to this. */
export const MAX_CRAWL_DELAY_MS = 30_000;
/** Retry-After is honoured up to this. */
export const MAX_RETRY_AFTER_MS = 120_000;
/** A 429 or 503 without Retry-After pauses the host this long, doubled with each further one. */
export const FIRST_BACKOFF_MS = 2_000;
export const MAX_BACKOFF_MS = 64_000;
/** Requests of a throttled URL after its first, before its 429/503 stands as the answer. */
export const MAX_THROTTLE_RETRIES = 3;

/** One crawl's own limits, lower than the host's. */
export interface CrawlPoliteness {
  /** Its requests in flight at once (1 to the host cap); the host cap when not set. */
  maxConcurrency?: number;
  /** Least time between two of its own request starts, ms. */
  delayMs?: number;
  /** Its per-request timeout, ms: how long a request it abandons keeps its slots after it was sent. */
  requestTimeoutMs?: number;
}

/** The report's `politeness` object. */
export interface PolitenessReport {
  max_concurrency: number;
  delay_ms: number;
  /** robots.txt's Crawl-delay for the crawl's host, seconds as written (capped at 30), or null. */
  crawl_delay_s: number | null;
  /** 429 and 503 answers the crawl received. */
  throttled: number;
  /** Requests sent again after a throttled answer. */
  retries: number;
  /** Time the crawl's requests waited for a paused host, ms (overlapping waits counted once). */
  paused_ms: number;
}

/** The report of a crawl that sent nothing through politeness (or whose counts are gone). */
export function quietPoliteness(maxConcurrency: number, delayMs = 0): PolitenessReport {
  return { max_concurrency: maxConcurrency, delay_ms: delayMs, crawl_delay_s: null, throttled: 0, retries: 0, paused_ms: 0 };
}

/** What the store says of a host when a process claims or renews its share. */
export interface HostGrant {
  /** Slots this process may use until its next renewal (0 while others hold them all). */
  slots: number;
  /** The host is paused until then (epoch ms; 0 when not). */
  pausedUntil: number;
}

/**
 * The store's side of host politeness, shared by every process on one store. Each process has its
 * own (its owner identity inside). Calls are rare: a claim when a host gets busy, a renewal a
 * second while it stays busy, a release when it is idle, a pause on a 429/503, a block of start
 * times when the host has an interval.
 */
export interface HostCoordinator {
  /**
   * Claims (or renews) up to `want` of the host's `cap` slots, sharing them fairly with the other
   * live holders. `held` stays counted as this process's whatever the grant: what it may have in
   * flight until the answer is back (its requests in flight, and the slots it may still fill).
   */
  claim(host: string, want: number, cap: number, held: number): Promise<HostGrant>;
  /** Gives this process's slots back. */
  release(host: string): Promise<void>;
  /**
   * Gives back every slot this process holds, on every host: called when it stops, so that a
   * process started in its place (a restart, a deploy) does not wait out the leases.
   */
  releaseAll(): Promise<void>;
  /** Pauses the host for every process until `until` (epoch ms); a later pause already stored stands. */
  pause(host: string, until: number): Promise<void>;
  /**
   * Reserves `count` start times `intervalMs` apart, after every start already reserved for the
   * host (by anyone) and not before now: returns the first (epoch ms).
   */
  reserveStarts(host: string, intervalMs: number, count: number): Promise<number>;
}

/** A sender with fetch's signature (the HTTP client's `answer`), and the request's queue hooks. */
export type Sender = (input: string, init: ClientInit & { queue?: RequestQueue }) => Promise<Answer>;

/** How often a busy host's lease is renewed (and a pause set elsewhere learnt). */
const RENEW_EVERY_MS = 1_000;
/**
 * Slots granted by a claim are used for at most this long after the claim was sent without another
 * answer: well within the store's lease time (10 s from the claim), after which other processes may
 * take them. A process that cannot renew stops starting requests then and waits for the store.
 */
const GRANT_VALID_MS = 5_000;
/** A block of start times the store could not reserve is asked for again after this long. */
const RESERVE_RETRY_MS = 250;
/** An idle host's slots are given back after this long. */
const IDLE_RELEASE_MS = 2_000;
/** Start times remembered to tell the pace when a host throttles. */
const RECENT_STARTS = 64;
/** A pace learnt from throttling eases by 3% after this long without a throttle. */
const EASE_EVERY_MS = 10_000;
/** A reserved start time may be used up to this late (timer jitter); later, it is skipped. */
const START_SLACK_MS = 4;
/** Start times reserved at once: about a second's worth, at most this many. */
const MAX_RESERVED_STARTS = 20;
/** Pauses remembered to tell how long a waiting request waited on them. */
const RECENT_PAUSES = 16;
/**
 * How long a request the crawl abandons keeps its slot after it was sent when the crawl does not say its
 * per-request timeout: the crawler's own (limits.ts).
 */
const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
  signal: AbortSignal;
  onAbort: () => void;
  /** onAbort is on the signal: the waiter did not start in the pump that queued it. */
  listening: boolean;
  /** It has left the queue to start. */
  started: boolean;
  /** When it began to wait: the pauses it waited on are counted from then. */
  since: number;
  paused: (from: number, to: number) => void;
}

/** One crawl's use of a host's gate: its waiting requests and those it has in flight there. */
interface Turn {
  waiters: Waiter[];
  inFlight: number;
  /**
   * Slot time it has used here (ms of requests in flight, summed) up to `changedAt`. A crawl that
   * comes starts at the least of the others', so that it goes first when the others have used more,
   * but never gets a head start of all the time they have used.
   */
  used: number;
  changedAt: number;
  /** When it was last given a slot (a counter): the last tie-break. */
  served: number;
}

/** A turn's slot time up to `now`. */
function usedBy(turn: Turn, now: number): number {
  return turn.used + turn.inFlight * (now - turn.changedAt);
}

/** `turn`'s requests in flight change by `step` at `now`. */
function stepTurn(turn: Turn, step: number, now: number): void {
  turn.used = usedBy(turn, now);
  turn.changedAt = now;
  turn.inFlight += step;
}

/** One host's gate in this process. */
class HostGate {
  inFlight = 0;
  private slots: number;
  /**
   * The crawls with requests waiting or in flight here. A free slot goes to the waiting crawl with
   * the fewest requests in flight here, then the one that has used the least slot time here: crawls
   * take the host's slots in turn, a crawl that comes to a busy host waits for at most one free slot
   * per other crawl, and a crawl of fast pages is not held to one request per slow one of the
   * others (first come first served let crawls with many requests queued keep a newcomer waiting
   * for all of them: 14 s for a start page behind five crawls of 4 s pages).
   */
  private readonly turns = new Map<object, Turn>();
  private waiting = 0;
  private servedCount = 0;
  private nextStart = 0;
  private reserved: number[] = [];
  private reservedEnd = 0;
  private reserving: Promise<void> | null = null;
  private reserveAgainAt = 0;
  pausedUntil = 0;
  /** The pauses this process knew of, from when it knew, oldest first (at most RECENT_PAUSES). */
  private readonly pauses: { from: number; to: number }[] = [];
  private backoffMs = 0;
  crawlDelayMs = 0;
  private timer: Timer | null = null;
  /** When the timer fires (epoch ms). */
  private timerAt = 0;
  /** While pump() runs, the wake it asks for (null: none yet), armed when it returns; undefined otherwise. */
  private wake: number | null | undefined = undefined;
  private renewing: Promise<void> | null = null;
  /** A release of this process's slots on its way to the store: a claim waits for it. */
  private releasing: Promise<void> | null = null;
  private renewedAt = 0;
  /** The granted slots may be used until then (epoch ms): GRANT_VALID_MS after the claim was sent. */
  private grantValidUntil = 0;
  private idleSince = 0;

  constructor(
    readonly host: string,
    private readonly config: PolitenessConfig,
    private readonly coordinator: HostCoordinator | null,
    private readonly now: () => number,
    private readonly onIdle: (gate: HostGate) => void,
  ) {
    // Alone, the process holds every slot; sharing, none until the store grants some.
    this.slots = coordinator === null ? config.hostConcurrency : 0;
  }

  get intervalMs(): number {
    const interval = Math.max(this.config.hostDelayMs, this.crawlDelayMs, this.learntMs);
    return interval === 0 ? 0 : widened(interval);
  }

  /** Nothing waits, nothing is in flight, and no store call is under way. */
  get idle(): boolean {
    return this.waiting === 0 && this.inFlight === 0 && this.renewing === null && this.releasing === null;
  }

  /**
   * Nothing of the gate is needed any more: idle, and no pause, Crawl-delay or next start time to
   * keep (a gate dropped between two requests took its next start time with it, and --host-delay
   * did not space a lone crawl's requests that came one after another).
   */
  forgettable(now: number): boolean {
    return this.idle && this.pausedUntil <= now && this.crawlDelayMs === 0 && this.nextStart <= now;
  }

  /**
   * The interval the host taught by throttling: 0 until its first 429/503; then the pace that was
   * too fast, slowed by a tenth (by a tenth more at each further throttle); eased by 3% every
   * EASE_EVERY_MS of answers without one, and dropped once it is under 5 ms (slow increase, quick
   * decrease, as TCP and Googlebot back off). A site that says "slow down" is
   * not asked at the same pace again right after the pause.
   */
  private learntMs = 0;
  private lastThrottle = 0;
  /** When the last pause this process set ends: the pace is measured after it. */
  private pauseEnded = 0;
  private lastEase = 0;
  /** The last RECENT_STARTS start times, a ring: the pace when a throttle comes. */
  private readonly recentStarts = new Float64Array(RECENT_STARTS);
  private startCount = 0;

  private noteStart(now: number): void {
    this.recentStarts[this.startCount++ % RECENT_STARTS] = now;
  }

  /**
   * Starts a second in the last second, or since the last pause ended if that is later (a window
   * that overlaps a pause would read the pause as the host's pace); null under a quarter second of
   * window, too short to tell.
   */
  private recentRate(now: number): number | null {
    const since = Math.max(now - 1_000, this.pauseEnded);
    if (now - since < 250) return null;
    let n = 0;
    for (let i = 0; i < Math.min(this.startCount, RECENT_STARTS); i++) if (this.recentStarts[i]! >= since) n++;
    return (Math.max(1, n) * 1_000) / (now - since);
  }

  /**
   * Waits for a slot and a start time; resolves once the request may start. `crawl` is the crawl
   * asking (slots go to crawls in turn); `first` puts the request ahead of the crawl's others (a
   * throttled request asked again). `paused` hears of the time it waited on pauses, when it stops
   * waiting; it has waited since `since` (a request asked again: since its 429 or 503 came).
   */
  acquire(
    signal: AbortSignal,
    crawl: object,
    first: boolean,
    paused: (from: number, to: number) => void,
    since = this.now(),
  ): Promise<void> {
    signal.throwIfAborted();
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        since,
        paused,
        onAbort: () => {
          const turn = this.turns.get(crawl);
          const at = turn?.waiters.indexOf(waiter) ?? -1;
          if (at >= 0) {
            turn!.waiters.splice(at, 1);
            this.waiting--;
            this.forget(crawl, turn!);
            this.countPaused(waiter, this.now());
          }
          reject(signal.reason);
          this.pump();
        },
        listening: false,
        started: false,
      };
      let turn = this.turns.get(crawl);
      if (turn === undefined) {
        const now = this.now();
        let least = Number.POSITIVE_INFINITY;
        for (const other of this.turns.values()) least = Math.min(least, usedBy(other, now));
        turn = { waiters: [], inFlight: 0, used: Number.isFinite(least) ? least : 0, changedAt: now, served: 0 };
        this.turns.set(crawl, turn);
      }
      if (first) turn.waiters.unshift(waiter);
      else turn.waiters.push(waiter);
      this.waiting++;
      this.pump();
      // A request that starts at once (a free slot, no interval to wait) never listens to its signal.
      if (!waiter.started) {
        waiter.listening = true;
        signal.addEventListener("abort", waiter.onAbort);
      }
    });
  }

  release(crawl: object): void {
    this.inFlight--;
    const turn = this.turns.get(crawl);
    if (turn !== undefined) {
      stepTurn(turn, -1, this.now());
      this.forget(crawl, turn);
    }
    if (this.inFlight === 0 && this.waiting === 0) this.idleSince = this.now();
    this.pump();
  }

  private forget(crawl: object, turn: Turn): void {
    if (turn.inFlight === 0 && turn.waiters.length === 0) this.turns.delete(crawl);
  }

  /**
   * The next waiting request's crawl: the fewest requests in flight here, then the least slot time
   * used here, then served longest ago.
   */
  private next(now: number): Turn {
    let best: Turn | undefined;
    let bestUsed = 0;
    for (const turn of this.turns.values()) {
      if (turn.waiters.length === 0) continue;
      const used = usedBy(turn, now);
      if (
        best === undefined ||
        turn.inFlight < best.inFlight ||
        (turn.inFlight === best.inFlight && (used < bestUsed || (used === bestUsed && turn.served < best.served)))
      ) {
        best = turn;
        bestUsed = used;
      }
    }
    return best!;
  }

  /** The pause the host is under lasts until `until` (epoch ms), from now as far as this process knows. */
  private pauseUntil(until: number, now: number): void {
    if (until <= this.pausedUntil) return;
    const last = this.pauses[this.pauses.length - 1];
    if (last !== undefined && last.to >= now) last.to = until;
    else {
      this.pauses.push({ from: now, to: until });
      if (this.pauses.length > RECENT_PAUSES) this.pauses.shift();
    }
    this.pausedUntil = until;
  }

  /** Tells a waiter that stops waiting at `at` the parts of its wait the host was paused. */
  private countPaused(waiter: Waiter, at: number): void {
    for (const pause of this.pauses) {
      const from = Math.max(pause.from, waiter.since);
      const to = Math.min(pause.to, at);
      if (to > from) waiter.paused(from, to);
    }
  }

  /** A 429 or 503 answered: pause the host (Retry-After, else the doubling backoff). */
  throttled(retryAfter: number | undefined, now = this.now()): void {
    // The pace of the last second, slowed by a tenth; a throttle at a learnt pace slows it by a tenth more.
    const rate = this.recentRate(now);
    const paced = rate === null ? this.learntMs * 1.1 : 1_000 / (rate * 0.9);
    if (now - this.lastThrottle > this.learntMs) this.learntMs = Math.min(Math.max(paced, this.learntMs * 1.1), MAX_CRAWL_DELAY_MS);
    this.lastThrottle = now;
    this.lastEase = now;
    let pauseMs: number;
    if (retryAfter !== undefined) pauseMs = Math.min(retryAfter, MAX_RETRY_AFTER_MS);
    else {
      this.backoffMs = this.backoffMs === 0 ? FIRST_BACKOFF_MS : Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
      pauseMs = this.backoffMs;
    }
    const until = now + pauseMs;
    this.pauseEnded = Math.max(this.pauseEnded, until);
    if (until > this.pausedUntil) {
      this.pauseUntil(until, now);
      this.coordinator?.pause(this.host, until).catch(() => {});
    }
    this.pump();
  }

  /** Any other answer: the backoff starts again from 2 s, and a learnt interval eases slowly. */
  answered(): void {
    this.backoffMs = 0;
    if (this.learntMs === 0) return;
    const now = this.now();
    if (now - this.lastEase < EASE_EVERY_MS) return;
    this.lastEase = now;
    this.learntMs = this.learntMs * 0.97 < 5 ? 0 : this.learntMs * 0.97;
  }

  /** Slots this process may fill now: sharing, what the store granted while that grant is valid. */
  private usableSlots(now: number): number {
    return this.coordinator === null || now < this.grantValidUntil ? this.slots : 0;
  }

  /**
   * Starts every waiter that may start now; otherwise arranges to look again when one may. The wake
   * it asks for last is armed when it returns (none: the timer is cleared), as if each call cleared
   * the timer first; but a timer already set for that time is kept. Every pump (two a request)
   * cleared the timer, and the lease's renewal set it again for the same time until it was renewed:
   * 1.2 % of an unchanged re-crawl's profile.
   */
  private pump(): void {
    this.wake = null;
    try {
      this.pumpNow();
    } finally {
      const at = this.wake;
      this.wake = undefined;
      if (typeof at === "number") this.arm(at);
      // null: no wake. (undefined: a pump inside this one armed its own, which stands; none is.)
      else if (at === null && this.timer !== null) {
        clearTimeout(this.timer);
        this.timer = null;
      }
    }
  }

  private pumpNow(): void {
    const now = this.now();
    if (this.coordinator !== null) this.keepLease(now);
    while (this.waiting > 0) {
      if (now < this.pausedUntil) {
        this.wakeAt(this.pausedUntil);
        return;
      }
      if (this.inFlight >= this.usableSlots(now)) return;
      const startAt = this.startTime(now);
      if (startAt === null) return; // a block of start times is being reserved
      if (startAt > now) {
        this.wakeAt(startAt);
        return;
      }
      const turn = this.next(now);
      const waiter = turn.waiters.shift()!;
      this.waiting--;
      waiter.started = true;
      if (waiter.listening) waiter.signal.removeEventListener("abort", waiter.onAbort);
      this.countPaused(waiter, now);
      this.inFlight++;
      stepTurn(turn, 1, now);
      turn.served = ++this.servedCount;
      this.noteStart(now);
      this.idleSince = 0;
      waiter.resolve();
    }
    if (this.inFlight === 0 && this.coordinator !== null && this.idleSince > 0) this.wakeAt(this.idleSince + IDLE_RELEASE_MS);
    else if (this.inFlight === 0 && this.coordinator === null) this.onIdle(this);
  }

  /**
   * When the next request may start: now or later, and consumed if now. With an interval and a
   * coordinator the start times come from reserved blocks; null while one is being reserved (or
   * until the store is asked again after it could not answer).
   */
  private startTime(now: number): number | null {
    const interval = this.intervalMs;
    if (interval === 0) return now;
    if (this.coordinator === null) {
      if (this.nextStart > now) return this.nextStart;
      this.nextStart = now + interval;
      return now;
    }
    // A reserved time used late moves this process's later ones by as much, and the block's last
    // is given up: it could fall closer than the interval to the next block, someone else's.
    const first = this.reserved[0];
    if (first !== undefined && first + START_SLACK_MS < now) {
      const late = now - first;
      this.reserved = this.reserved.map((t) => t + late).filter((t) => t <= this.reservedEnd - interval);
    }
    const next = this.reserved[0];
    if (next === undefined) {
      if (now < this.reserveAgainAt) {
        this.wakeAt(this.reserveAgainAt);
        return null;
      }
      this.reserve(interval);
      return null;
    }
    if (next > now) return next;
    this.reserved.shift();
    return now;
  }

  private reserve(interval: number): void {
    if (this.reserving !== null) return;
    const count = Math.min(MAX_RESERVED_STARTS, Math.max(1, Math.ceil(RENEW_EVERY_MS / interval)));
    this.reserving = this.coordinator!.reserveStarts(this.host, interval, count).then(
      (first) => {
        this.reserved = Array.from({ length: count }, (_, i) => first + i * interval);
        // Where the next block (anyone's) may start: no start of this one may come later than an interval before it.
        this.reservedEnd = first + count * interval;
        this.reserving = null;
        this.pump();
      },
      () => {
        // The store could not answer: no start without it (another process may be starting
        // meanwhile); it is asked again shortly.
        this.reserving = null;
        this.reserveAgainAt = this.now() + RESERVE_RETRY_MS;
        this.pump();
      },
    );
  }

  /**
   * Claims slots when the host gets busy, renews them every second, releases them once idle. What
   * the store counts as this process's is never less than what it may have in flight: its requests
   * in flight and the slots it may still fill until the claim's answer is back (a claim retried
   * while the store was busy once recorded the requests in flight when it was first tried, fewer
   * than were by the time it was written).
   */
  private keepLease(now: number): void {
    if (this.renewing !== null) return;
    const busy = this.waiting > 0 || this.inFlight > 0;
    if (!busy) {
      if (this.idleSince > 0 && now - this.idleSince >= IDLE_RELEASE_MS && this.releasing === null) {
        // Idle long enough: give the slots back (a claim that got none leaves a row too). Nothing is
        // left to wake for; with idleSince set, pump would set the release timer again, at once, forever.
        this.idleSince = 0;
        const held = this.slots > 0 || this.renewedAt !== 0;
        this.slots = 0;
        this.renewedAt = 0;
        this.grantValidUntil = 0;
        if (!held) {
          this.onIdle(this);
          return;
        }
        // A claim made before the release is written would be undone by it: the next claim waits for it.
        this.releasing = this.coordinator!.release(this.host)
          .catch(() => {})
          .then(() => {
            this.releasing = null;
            if (this.idle) this.onIdle(this);
            else this.pump();
          });
      }
      return;
    }
    if (this.renewedAt !== 0 && now - this.renewedAt < RENEW_EVERY_MS) {
      // Run inside pump only, which has asked for no wake yet.
      this.wakeAt(this.renewedAt + RENEW_EVERY_MS);
      return;
    }
    if (this.releasing !== null) return; // pumped again once the release is written
    const want = this.config.hostConcurrency;
    const sentAt = now;
    this.renewing = this.coordinator!.claim(this.host, want, want, Math.max(this.inFlight, this.usableSlots(now))).then(
      (grant) => {
        this.renewing = null;
        this.renewedAt = this.now();
        this.grantValidUntil = sentAt + GRANT_VALID_MS;
        this.slots = grant.slots;
        if (grant.pausedUntil > this.pausedUntil) this.pauseUntil(grant.pausedUntil, this.renewedAt);
        this.pump();
        // Keep renewing while busy, even when nothing else wakes the gate.
        if (this.timer === null && (this.waiting > 0 || this.inFlight > 0)) this.wakeAt(this.renewedAt + RENEW_EVERY_MS);
      },
      () => {
        // The store could not answer (down, or busy past its deadline): the slots granted last are
        // used while that grant is valid, then none until the store answers again. The process
        // waits for the store rather than take a slot the other processes do not know of.
        this.renewing = null;
        this.renewedAt = this.now();
        this.pump();
        if (this.timer === null) this.wakeAt(this.renewedAt + RENEW_EVERY_MS);
      },
    );
  }

  /** Looks again at `at`: inside pump, once it returns. */
  private wakeAt(at: number): void {
    if (this.wake !== undefined) this.wake = at;
    else this.arm(at);
  }

  private arm(at: number): void {
    if (this.timer !== null) {
      if (this.timerAt === at) return;
      clearTimeout(this.timer);
    }
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.pump();
      },
      timerDelay(Math.max(0, at - this.now())),
    );
  }
}

/** The process's hosts: one gate each, shared by every crawl. */
export class Politeness {
  private readonly gates = new Map<string, HostGate>();

  constructor(
    readonly config: PolitenessConfig,
    private readonly coordinator: HostCoordinator | null = null,
    private readonly now: () => number = Date.now,
    /** Told of every 429 or 503 a crawl receives (the server's metric). */
    readonly onThrottled: () => void = () => {},
  ) {}

  /** The gate of `host` (a name or IP literal and port, as hostOf writes it), by its politeHost key. */
  gate(host: string): HostGate {
    const key = politeHost(host);
    let gate = this.gates.get(key);
    if (gate === undefined) {
      gate = new HostGate(key, this.config, this.coordinator, this.now, (idle) => {
        if (this.gates.get(idle.host) === idle && idle.forgettable(this.now())) this.gates.delete(idle.host);
      });
      this.gates.set(key, gate);
    }
    return gate;
  }

  /** One crawl's face: its own limits below the host's, its retries and its counts. */
  open(settings: CrawlPoliteness = {}): CrawlPolite {
    return new CrawlPolite(this, settings, this.now);
  }
}

/** A crawl's use of the hosts: wraps a sender so that each request passes the crawl's and the host's limits. */
export class CrawlPolite {
  readonly maxConcurrency: number;
  readonly delayMs: number;
  private readonly requestTimeoutMs: number;
  private inFlight = 0;
  private readonly queue: (() => void)[] = [];
  private nextStart = 0;
  private timer: Timer | null = null;
  private crawlDelayS: number | null = null;
  private throttled = 0;
  private retries = 0;
  private pausedMs = 0;
  /** End of the last counted pause wait: overlapping waits count once. */
  private pausedTo = 0;

  constructor(
    private readonly politeness: Politeness,
    settings: CrawlPoliteness,
    private readonly now: () => number,
  ) {
    const cap = politeness.config.hostConcurrency;
    this.maxConcurrency = Math.max(1, Math.min(settings.maxConcurrency ?? cap, cap));
    this.delayMs = Math.max(0, settings.delayMs ?? 0);
    this.requestTimeoutMs = settings.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  }

  /** robots.txt's Crawl-delay for `host` (seconds; null for none): raises the host's interval for every crawl. */
  crawlDelay(host: string, seconds: number | null): void {
    this.crawlDelayS = seconds === null ? null : Math.min(seconds, MAX_CRAWL_DELAY_MS / 1000);
    if (seconds !== null) {
      const gate = this.politeness.gate(host);
      gate.crawlDelayMs = Math.max(gate.crawlDelayMs, Math.min(seconds * 1000, MAX_CRAWL_DELAY_MS));
    }
  }

  report(): PolitenessReport {
    return {
      max_concurrency: this.maxConcurrency,
      // The interval kept between this crawl's starts to its host: its own and the server's, whichever is larger.
      delay_ms: Math.max(this.delayMs, this.politeness.config.hostDelayMs),
      crawl_delay_s: this.crawlDelayS,
      throttled: this.throttled,
      retries: this.retries,
      paused_ms: Math.round(this.pausedMs),
    };
  }

  /**
   * `send` behind this crawl's and the host's limits: a request waits for both, holds its slots
   * until its body is read or dropped, and a 429 or 503 pauses the host and is sent again after
   * the pause, up to MAX_THROTTLE_RETRIES times (then it is the answer).
   *
   * A request the crawl abandons (its signal aborts: a cancelled job, a crawl out of time, a render
   * timeout) is aborted at once (its connection closed), but the site may go on working on it, and
   * a slot freed then let the next crawl's requests pile on top (8 to 24 at once on a cap of 4 as
   * jobs were cancelled): its slots stay taken until the crawl's per-request timeout has passed
   * since it was sent. A request whose answer ended before the abort gave them back then.
   */
  wrap(send: Sender): Sender {
    // A sender that settles on its signal (the client) is not raced: its answer is read with the signal.
    const settles = isSettlingOnAbort(send);
    // Every wait here rejects as the signal aborts, and so does the send (raced, or settling by itself).
    return settlesOnAbort(async (input, init) => {
      const signal = init.signal ?? new AbortController().signal;
      const gate = this.politeness.gate(hostOf(input, init.headers));
      init.queue?.enter();
      try {
        await this.own(signal);
      } catch (error) {
        init.queue?.leave();
        throw error;
      }
      // The crawl's own slot is held from here to the answer's end, through any pause and retry.
      let throttledAt: number | undefined;
      for (let attempt = 0; ; attempt++) {
        if (attempt > 0) init.queue?.enter();
        try {
          // A request asked again goes ahead of the crawl's others: it has waited longest.
          await gate.acquire(signal, this, attempt > 0, (from, to) => this.countPause(from, to), throttledAt);
        } catch (error) {
          this.ownDone();
          throw error;
        } finally {
          init.queue?.leave();
        }
        let retrying = false;
        const request = this.sent(signal, () => {
          gate.release(this);
          if (!retrying) this.ownDone();
        });
        const sending = send(input, { ...init, signal });
        let res: Answer;
        try {
          if (settles) {
            res = await sending;
            signal.throwIfAborted();
          } else res = await untilAborted(sending, signal);
        } catch (error) {
          // Abandoned before its answer, the request is aborted with it: `end` keeps its slots to its deadline.
          if (signal.aborted) sending.then(discardBody, () => {});
          request.end();
          throw settles && signal.aborted ? signal.reason : error;
        }
        if (res.status !== 429 && res.status !== 503) {
          gate.answered();
          return whenBodyEnds(res, request);
        }
        this.throttled++;
        this.politeness.onThrottled();
        throttledAt = this.now();
        gate.throttled(retryAfterMs(res.headers, throttledAt), throttledAt);
        if (attempt === MAX_THROTTLE_RETRIES) return whenBodyEnds(res, request);
        // Drop this answer's body (the host's slot with it) and wait out the pause before asking again.
        discardBody(res);
        retrying = true;
        request.end();
        this.retries++;
      }
    });
  }

  /**
   * A request just sent under `signal`, and `end`, which gives its slots back: at once when its
   * answer ended, or, once the crawl has abandoned it (`signal` aborted, which aborts the request),
   * only when the per-request timeout has passed since it was sent, as the site may still be at it.
   */
  private sent(signal: AbortSignal, release: () => void): SentRequest {
    const deadline = this.now() + this.requestTimeoutMs;
    return {
      end: once(() => {
        const left = signal.aborted ? deadline - this.now() : 0;
        if (left <= 0) return release();
        // Not a reason to keep the process alive: a process that exits has no requests left at the site.
        setTimeout(release, timerDelay(left)).unref();
      }),
    };
  }

  private countPause(from: number, to: number): void {
    const start = Math.max(from, this.pausedTo);
    if (to > start) {
      this.pausedMs += to - start;
      this.pausedTo = to;
    }
  }

  /** Waits for one of this crawl's own slots and its own start interval. */
  private own(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.inFlight < this.maxConcurrency && this.queue.length === 0 && this.now() >= this.nextStart) {
      this.startOwn();
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const entry = () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = () => {
        const at = this.queue.indexOf(entry);
        if (at >= 0) this.queue.splice(at, 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.queue.push(entry);
      this.pumpOwn();
    });
  }

  private startOwn(): void {
    this.inFlight++;
    if (this.delayMs > 0) this.nextStart = this.now() + widened(this.delayMs);
  }

  private ownDone(): void {
    this.inFlight--;
    this.pumpOwn();
  }

  private pumpOwn(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    while (this.queue.length > 0 && this.inFlight < this.maxConcurrency) {
      const now = this.now();
      if (now < this.nextStart) {
        this.timer = setTimeout(
          () => {
            this.timer = null;
            this.pumpOwn();
          },
          timerDelay(this.nextStart - now),
        );
        return;
      }
      this.startOwn();
      this.queue.shift()!();
    }
  }
}

/** A request on its way: the end of its hold on the slots. */
interface SentRequest {
  end: () => void;
}

/** A Retry-After value as the pause it asks for, ms, at most MAX_RETRY_AFTER_MS; undefined when unreadable. */
export function retryAfterMsFor(value: string, now: number): number | undefined {
  const ms = retryAfterMs(new Headers({ "retry-after": value }), now);
  return ms === undefined ? undefined : Math.min(ms, MAX_RETRY_AFTER_MS);
}

/**
 * An interval as request starts are spaced: the host sees a request when it arrives, after a
 * connection is opened or a socket written, so starts go a little wider than asked (a tenth, 5 to
 * 50 ms) for arrivals not to come closer; whole milliseconds, as the store keeps them.
 */
function widened(interval: number): number {
  return Math.ceil(interval + Math.min(50, Math.max(5, interval / 10)));
}

/** The host of an absolute URL, as hostOf names it. */
export function hostOfUrl(url: string): string {
  const parsed = new URL(url);
  return hostOf(parsed.href, { Host: parsed.host });
}

/** The host a request goes to: the Host header's name and port (the URL holds the checked IP), lower-cased, the default port written out. */
export function hostOf(input: string, headers: BunFetchRequestInit["headers"]): string {
  const https = input.startsWith("https:");
  const named = headers && !Array.isArray(headers) && !(headers instanceof Headers) ? (headers as Record<string, string>).Host : undefined;
  const host = (named ?? new URL(input).host).toLowerCase();
  // An IPv6 literal ends in "]" and has its port after it; a name or IPv4 address after its only colon.
  const hasPort = host.startsWith("[") ? host.includes("]:") : host.includes(":");
  return hasPort ? host : `${host}:${https ? 443 : 80}`;
}

/**
 * The key of a host's gate: `host` as hostOf writes it, with its name's trailing dots dropped and an
 * IPv4-mapped IPv6 address written as IPv4, so that the spellings of one host share its limits
 * (`localhost.:8005`, `localhost..:8005` and `localhost:8005` had a cap each).
 */
export function politeHost(host: string): string {
  if (host.startsWith("[")) {
    const close = host.indexOf("]");
    const literal = host.slice(1, close);
    if (ipaddr.IPv6.isValid(literal)) {
      const address = ipaddr.IPv6.parse(literal);
      if (address.isIPv4MappedAddress()) return `${address.toIPv4Address().toString()}${host.slice(close + 1)}`;
    }
    return host;
  }
  const colon = host.lastIndexOf(":");
  const name = colon < 0 ? host : host.slice(0, colon);
  const trimmed = name.replace(/\.+$/, "");
  return trimmed === name ? host : `${trimmed}${colon < 0 ? "" : host.slice(colon)}`;
}

function once(fn: () => void): () => void {
  let called = false;
  return () => {
    if (called) return;
    called = true;
    fn();
  };
}

/**
 * `res` with `request.end` called once its body has been read to the end, failed or been
 * cancelled: a body already in memory (or none) at once; a streamed one through a reader that
 * watches it. (`end` itself keeps the slots of an abandoned request to its deadline.)
 */
function whenBodyEnds(res: Answer, request: SentRequest): Answer {
  const done = request.end;
  const stream = res instanceof ClientAnswer ? (res.inMemory ? null : res.body) : BODY_IN_MEMORY in res ? null : res.body;
  if (stream === null) {
    done();
    return res;
  }
  const reader = stream.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: ended, value } = await reader.read();
        if (ended) {
          done();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        done();
        controller.error(error);
      }
    },
    cancel(reason) {
      done();
      return reader.cancel(reason);
    },
  });
  return new ClientAnswer(res.status, res.statusText, res.headers, body);
}
