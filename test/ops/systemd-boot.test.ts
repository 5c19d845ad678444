// The deployment for real: a systemd booted in a container (systemd-nspawn over a throwaway overlay
// of this machine's root, with its own network namespace) runs scripts/install.sh, the unit with all
// its hardening, the README's key command, an upgrade, a stop and an uninstall. Needs root, overlayfs
// and systemd-nspawn (Debian's systemd-container); skipped with the reason otherwise. Where those are
// present a boot that does not finish fails the file (a skip that depends on timing hid it), and
// every container the file starts is taken down on every way out, which its last test checks.
import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { join } from "node:path";
import { BINARY, ensureBinary, tempDir } from "../support/binary.ts";
import { needs, program } from "../support/requires.ts";

const root = join(import.meta.dir, "../..");
// The container's systemd mounts a fresh /tmp (where CI's clone may live), so the files under test
// are copied into its root at a fixed place.
const INSIDE = "/opt/genapi-test";
const INSTALL = `${INSIDE}/scripts/install.sh`;

/** The README's command to create a key as the service's dynamic user, in its state directory. */
const KEY_COMMAND = [
  "systemd-run",
  "--quiet",
  "--pipe",
  "--wait",
  "--collect",
  "-p",
  "DynamicUser=yes",
  "-p",
  "User=genapi",
  "-p",
  "StateDirectory=genapi",
  "-p",
  "StateDirectoryMode=0700",
  "-p",
  "UMask=0077",
  "/usr/local/bin/genapi",
  "keys",
];

// The commands above must be the README's, word for word: the deploy section is what users copy.
test("the README's deploy section gives exactly the commands this test runs", () => {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Deploy on a Linux server with systemd"), readme.indexOf("## Development"));
  const commands = [...section.matchAll(/^ {4}(\S.*)$/gm)].map((m) => m[1]);
  expect(commands).toContain("sudo ./install.sh genapi");
  expect(commands).toContain(`sudo ${KEY_COMMAND.join(" ")} create --name alice`);
  expect(commands).toContain("sudo systemctl restart genapi");
  expect(section).toContain("`sudo ./install.sh --uninstall`");
});

interface Machine {
  /** The container's init, as the host sees it (nsenter -t). */
  pid: number;
  /** Runs a command inside the container (all its namespaces and its root). */
  run: (argv: string[]) => { code: number | null; stdout: string; stderr: string };
  /** Fetches a URL from inside the container's network namespace; resolves with status and body. */
  fetch: (
    url: string,
    init?: { method?: string; headers?: Record<string, string>; body?: string },
  ) => Promise<{ status: number; body: string }>;
  log: () => string;
  shutdown: () => Promise<void>;
}

/** How long the container's systemd may take to finish booting before the test fails. */
const BOOT_DEADLINE_MS = 180_000;

// The container sees this machine's files through an overlay whose writes land in a tmpfs, so
// nothing it installs, enables or logs reaches the real /etc, /usr/local or /var. Two targets:
// the one the tests boot, and one that never finishes booting (a oneshot that never exits), for
// the test that a boot that does not finish fails and leaves nothing behind.
const BOOT_SCRIPT = `set -e
W="$1"
mkdir -p "$W"
mount --make-rprivate /
mount -t tmpfs tmpfs "$W"
mkdir "$W/upper" "$W/work" "$W/root"
mount -t overlay overlay -o lowerdir=/,upperdir="$W/upper",workdir="$W/work" "$W/root"
mkdir -p "$W/root/etc/systemd/system" "$W/root${INSIDE}/scripts" "$W/root${INSIDE}/deploy" "$W/root${INSIDE}/dist"
cp "$2/scripts/install.sh" "$W/root${INSIDE}/scripts/"
cp "$2/deploy/genapi.service" "$2/deploy/genapi.env" "$W/root${INSIDE}/deploy/"
cp "$3" "$W/root${INSIDE}/dist/genapi"
printf '[Unit]\\nDescription=genapi test boot\\nWants=dbus.socket\\n' > "$W/root/etc/systemd/system/genapi-test.target"
printf '[Unit]\\nDescription=a boot that never finishes\\nWants=genapi-test-hang.service\\n' > "$W/root/etc/systemd/system/genapi-test-hang.target"
printf '[Service]\\nType=oneshot\\nExecStart=/bin/sleep infinity\\n' > "$W/root/etc/systemd/system/genapi-test-hang.service"
exec systemd-nspawn --quiet --register=no --keep-unit --private-network --console=passive \\
  --machine="$4" -D "$W/root" --boot -- --unit="$5"`;

function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

const comm = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
};

const pidNamespace = (pid: number | string) => {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return "";
  }
};

/** Every container this file started: its machine name, its PID namespace and the way to take it down. */
const containers: { name: string; pidNs: string; shutdown: () => Promise<void> }[] = [];
const shutdownAll = () => Promise.all(containers.map((c) => c.shutdown()));
/** Host pids to kill should this test process exit with a container still up. */
const lastResort = new Set<number>();
process.on("exit", () => {
  for (const pid of lastResort) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
});

/** Processes left from this file's containers: nspawn by its machine name, anything inside by its PID namespace. */
function leftovers(): string[] {
  const found: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let cmdline = "";
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ");
    } catch {
      continue;
    }
    const ns = pidNamespace(entry);
    if (containers.some((c) => cmdline.includes(`--machine=${c.name}`) || (c.pidNs !== "" && ns === c.pidNs))) {
      found.push(`${entry} ${comm(Number(entry))}: ${cmdline.trim().slice(0, 120)}`);
    }
  }
  return found;
}

const kill = (pid: number, signal: NodeJS.Signals) => {
  try {
    if (pid) process.kill(pid, signal);
  } catch {}
};

async function boot(target = "genapi-test.target", deadlineMs = BOOT_DEADLINE_MS): Promise<Machine> {
  const dir = tempDir("genapi-nspawn-");
  const logPath = join(dir, "console.log");
  const name = `genapi-test-${crypto.randomUUID().slice(0, 8)}`;
  const container = { name, pidNs: "", shutdown: () => shutdown() };
  containers.push(container);
  // timeout(1) is the last resort should this test process die: it takes the container with it.
  const outer = Bun.spawn(
    [
      "timeout",
      "-s",
      "KILL",
      "600",
      "unshare",
      "--mount",
      "--fork",
      "--kill-child",
      "bash",
      "-c",
      BOOT_SCRIPT,
      "boot",
      join(dir, "w"),
      root,
      BINARY,
      name,
      target,
    ],
    { stdin: "ignore", stdout: Bun.file(logPath), stderr: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } },
  );
  const log = () => {
    try {
      return readFileSync(logPath, "utf8");
    } catch {
      return "";
    }
  };
  // timeout -> unshare -> (bash exec'd as) systemd-nspawn -> the container's systemd
  let unshare = 0;
  let nspawn = 0;
  let init = 0;
  for (let i = 0; i < 200 && !init; i++) {
    if (outer.exitCode !== null) break;
    unshare = childPids(outer.pid)[0] ?? 0;
    nspawn = unshare ? (childPids(unshare).find((pid) => comm(pid) === "systemd-nspawn") ?? 0) : 0;
    init = nspawn ? (childPids(nspawn).find((pid) => comm(pid) === "systemd") ?? 0) : 0;
    if (!init) await Bun.sleep(50);
  }
  container.pidNs = init ? pidNamespace(init) : "";
  for (const pid of [init, nspawn, unshare, outer.pid]) if (pid) lastResort.add(pid);
  let down: Promise<void> | undefined;
  // Every way out (tests done, boot failed, boot never finished) comes through here, once.
  const shutdown = () =>
    (down ??= (async () => {
      kill(nspawn, "SIGTERM"); // nspawn asks the container to power off
      const exited = await Promise.race([outer.exited.then(() => true), Bun.sleep(15_000).then(() => false)]);
      if (!exited) {
        // Killing the container's init ends every process in its PID namespace; then the wrappers.
        for (const pid of [init, nspawn, unshare]) kill(pid, "SIGKILL");
        outer.kill("SIGKILL");
      }
      await outer.exited;
      for (let i = 0; i < 100 && init && pidNamespace(init) !== "" && pidNamespace(init) === container.pidNs; i++) await Bun.sleep(50);
      for (const pid of [init, nspawn, unshare, outer.pid]) lastResort.delete(pid);
      rmSync(dir, { recursive: true, force: true });
    })());
  if (!init) {
    const stderr = await Promise.race([new Response(outer.stderr).text(), Bun.sleep(1000).then(() => "")]);
    await shutdown();
    throw new Error(`the container did not boot: ${stderr}${log()}`.trim());
  }
  const enter = ["nsenter", "-t", String(init)];
  const run = (argv: string[]) => {
    const proc = Bun.spawnSync([...enter, "-a", "-r", "-w", ...argv], { stdout: "pipe", stderr: "pipe", timeout: 30_000 });
    return { code: proc.exitCode, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
  };
  try {
    await waitForBoot(enter, performance.now() + deadlineMs);
  } catch (error) {
    await shutdown();
    throw new Error(`${(error as Error).message}\n${log()}`);
  }
  const fetchInside = async (url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) => {
    // Only the network namespace is entered: this Bun and its files stay the host's.
    const script = `const r = await fetch(${JSON.stringify(url)}, ${JSON.stringify(init)}); console.log(JSON.stringify({ status: r.status, body: await r.text() }));`;
    const proc = Bun.spawn([...enter, "-n", process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    if (code !== 0) throw new Error(`fetch ${url} inside the container failed: ${err}`);
    return JSON.parse(out) as { status: number; body: string };
  };
  return { pid: init, run, fetch: fetchInside, log, shutdown };
}

/**
 * `systemctl is-system-running --wait` semantics, with a deadline: `running` and `degraded` are a
 * finished boot; `initializing`, `starting` and `offline` (systemctl cannot reach PID 1 yet, which
 * it reports at once, --wait or not) are not final, so they are asked again; anything else
 * (`maintenance`, `stopping`) or the deadline fails.
 */
async function waitForBoot(enter: string[], deadline: number): Promise<void> {
  let last = "";
  while (performance.now() < deadline) {
    // timeout(1) runs inside: killing nsenter would leave systemctl holding the pipes open.
    const seconds = String(Math.max(1, Math.ceil((deadline - performance.now()) / 1000)));
    const proc = Bun.spawn([...enter, "-a", "-r", "-w", "timeout", "-s", "KILL", seconds, "systemctl", "is-system-running", "--wait"], {
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    const state = out.trim();
    if (state === "running" || state === "degraded") return;
    last = state || err.trim() || "no answer";
    if (state !== "" && !["initializing", "starting", "offline"].includes(state)) break;
    await Bun.sleep(200);
  }
  // Cut at the deadline while still waiting: say where the boot stands now.
  const now = Bun.spawnSync([...enter, "-a", "-r", "-w", "systemctl", "is-system-running"], { stdout: "pipe", timeout: 10_000 });
  throw new Error(`the container's systemd did not finish booting: ${now.stdout.toString().trim() || last}`);
}

async function setUp(): Promise<{ machine?: Machine; skip?: true; failure?: Error }> {
  const wanted = needs(
    import.meta.path,
    { root: "boots systemd in a container" },
    "unshare",
    "nsenter",
    "timeout",
    "systemd-nspawn",
    "dbus-daemon",
  );
  if (!wanted) return { skip: true };
  await ensureBinary();
  // From here on everything the test needs is present: a boot that fails is a failure, not a skip.
  try {
    return { machine: await boot() };
  } catch (error) {
    return { failure: error as Error };
  }
}

const { machine, skip, failure } = await setUp();
// The rendered crawl under the unit also needs Chromium (asked only where the container boots).
const chromium = machine ? program(import.meta.path, "chromium") : null;

// Whatever happened (a test failed or timed out half-way), no container outlives the file.
afterAll(async () => {
  await shutdownAll();
});

test.skipIf(Boolean(skip))("the container's systemd finishes booting", () => {
  if (failure) throw failure;
  expect(machine).toBeDefined();
});

/** Waits until the service answers /healthz (Type=exec: "active" comes before listening). */
async function waitHealthy(m: Machine): Promise<void> {
  let last = "";
  for (let i = 0; i < 50; i++) {
    try {
      const health = await m.fetch("http://127.0.0.1:8080/healthz");
      if (health.status === 200) return;
      last = `status ${health.status}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await Bun.sleep(100);
  }
  throw new Error(`genapi did not answer /healthz: ${last}\n${m.run(["journalctl", "-u", "genapi", "--no-pager"]).stdout}`);
}

describe.skipIf(!machine)("genapi.service under a real systemd", () => {
  const m = machine!;
  const binary = `${INSIDE}/dist/genapi`;
  const mainPid = () => m.run(["systemctl", "show", "genapi", "-p", "MainPID", "--value"]).stdout.trim();
  let firstPid = "";

  test("install.sh installs, enables and starts it as a dynamic user that owns the database", async () => {
    const installed = m.run(["bash", INSTALL, binary]);
    expect(installed.stdout + installed.stderr).toContain("enabled and started genapi.service");
    expect(installed.code).toBe(0);
    expect(m.run(["systemctl", "is-enabled", "genapi"]).stdout.trim()).toBe("enabled");
    await waitHealthy(m);
    firstPid = mainPid();
    // The process runs with no capabilities under a UID allocated for it, not root.
    const status = m.run(["cat", `/proc/${firstPid}/status`]).stdout;
    expect(status).toMatch(/^CapEff:\s+0+$/m);
    expect(status).toMatch(/^NoNewPrivs:\s+1$/m);
    const uid = /^Uid:\s+(\d+)/m.exec(status)![1]!;
    expect(Number(uid)).toBeGreaterThanOrEqual(61184); // systemd's DynamicUser range
    const db = m.run(["stat", "-c", "%u %a", "/var/lib/private/genapi/genapi.db"]);
    expect(db.stdout.trim()).toBe(`${uid} 600`);
    expect(m.run(["readlink", "/var/lib/genapi"]).stdout.trim()).toBe("private/genapi");
  });

  test("the README's key command creates a key that the running service accepts at once", async () => {
    const created = m.run([...KEY_COMMAND, "create", "--name", "readme"]);
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^genapi_[0-9A-Za-z]+$/);
    expect(created.stdout).toBe(`${key}\n`);
    // Authenticated, then refused at the address check: the key works without a restart.
    const response = await m.fetch("http://127.0.0.1:8080/api/generate", {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: JSON.stringify({ url: "http://localhost/" }),
    });
    expect(response.status).toBe(400);
    const listed = JSON.parse(m.run([...KEY_COMMAND, "list", "--json"]).stdout);
    expect(listed).toHaveLength(1);
    expect(listed[0].name).toBe("readme");
    expect(listed[0].last_used_at).not.toBeNull();
    // The files still belong to the service's user, none to root.
    const owners = m.run(["stat", "-c", "%U", ...["", "-wal", "-shm"].map((s) => `/var/lib/private/genapi/genapi.db${s}`)]);
    expect(owners.stdout.trim().split("\n")).toEqual(["genapi", "genapi", "genapi"]);
  });

  test("install.sh again restarts the service and keeps the edited settings", async () => {
    m.run(["sh", "-c", "echo GENAPI_FREE_DAILY_LIMIT=7 > /etc/genapi/genapi.env"]);
    const again = m.run(["bash", INSTALL, binary]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("restarted genapi.service");
    expect(m.run(["cat", "/etc/genapi/genapi.env"]).stdout).toBe("GENAPI_FREE_DAILY_LIMIT=7\n");
    await waitHealthy(m);
    expect(mainPid()).not.toBe(firstPid);
    const environ = m.run(["cat", `/proc/${mainPid()}/environ`]).stdout.split("\0");
    expect(environ).toContain("GENAPI_FREE_DAILY_LIMIT=7");
    expect(environ).toContain("STATE_DIRECTORY=/var/lib/genapi");
    // The hardened unit lets the service start itself again without the JIT's top tier (src/commands/ftl.ts).
    expect(environ).toContain("BUN_JSC_useFTLJIT=0");
  });

  test.skipIf(chromium === null)(
    "a rendered crawl works under the unit, with Chromium's sandbox on",
    async () => {
      // A single-page application in the container's network namespace: its links exist only once
      // its script has run.
      const siteScript = `
      const pages = ["/", "/a", "/b"];
      const shell = '<!doctype html><html><body><nav id="n"></nav><script>fetch("/pages.json").then(r => r.json()).then(l => { for (const p of l) { const a = document.createElement("a"); a.href = p; document.getElementById("n").append(a); } });</script></body></html>';
      const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch(req) {
        const path = new URL(req.url).pathname;
        if (path === "/pages.json") return Response.json(pages);
        if (pages.includes(path)) return new Response(shell, { headers: { "content-type": "text/html" } });
        return new Response("not found", { status: 404 });
      } });
      console.log(server.port);`;
      const site = Bun.spawn(["nsenter", "-t", String(m.pid), "-n", process.execPath, "-e", siteScript], {
        stdout: "pipe",
        stderr: "pipe",
      });
      try {
        const reader = site.stdout.getReader();
        const port = new TextDecoder().decode((await reader.read()).value).trim();
        m.run(["sh", "-c", "printf 'GENAPI_FREE_DAILY_LIMIT=7\\nGENAPI_ALLOW_PRIVATE_TARGETS=1\\n' > /etc/genapi/genapi.env"]);
        expect(m.run(["systemctl", "restart", "genapi"]).code).toBe(0);
        await waitHealthy(m);
        const key = m.run([...KEY_COMMAND, "create", "--name", "render", "--daily-limit", "100"]).stdout.trim();
        const answer = await m.fetch("http://127.0.0.1:8080/api/generate", {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": key },
          body: JSON.stringify({ url: `http://127.0.0.1:${port}/`, render: "always" }),
        });
        const journal = () => m.run(["journalctl", "-u", "genapi", "--no-pager", "-n", "40"]).stdout;
        expect(answer.status, journal()).toBe(200);
        const data = JSON.parse(answer.body).data;
        expect(data.url_count, journal()).toBe(3);
        expect(data.render).toEqual({ mode: "always", rendered: true, pages_rendered: 3 });
        // The browser still runs (genapi keeps it for the next page), in its sandbox: none of its
        // processes was started with --no-sandbox.
        const browsers = m.run(["sh", "-c", "for p in $(pgrep -x chromium); do tr '\\0' ' ' < /proc/$p/cmdline; echo; done"]).stdout;
        const lines = browsers.trim().split("\n").filter(Boolean);
        expect(lines.length).toBeGreaterThan(0);
        expect(lines.filter((line) => line.includes("--no-sandbox"))).toEqual([]);
      } finally {
        site.kill();
        m.run(["sh", "-c", "echo GENAPI_FREE_DAILY_LIMIT=7 > /etc/genapi/genapi.env"]);
      }
    },
    120_000,
  );

  test("systemctl stop ends it with SIGTERM, exit 0 and a checkpointed database", () => {
    expect(m.run(["systemctl", "stop", "genapi"]).code).toBe(0);
    const shown = m.run(["systemctl", "show", "genapi", "-p", "Result", "-p", "ExecMainStatus", "-p", "ExecMainCode"]).stdout;
    expect(shown).toContain("Result=success");
    expect(shown).toContain("ExecMainStatus=0");
    expect(shown).toContain("ExecMainCode=1"); // CLD_EXITED: it exited, it was not killed
    expect(m.run(["ls", "/var/lib/private/genapi"]).stdout.trim()).toBe("genapi.db");
  });

  test("install.sh --uninstall removes the binary and the unit but keeps settings and data", () => {
    const removed = m.run(["bash", INSTALL, "--uninstall"]);
    expect(removed.code).toBe(0);
    expect(m.run(["test", "-e", "/usr/local/bin/genapi"]).code).toBe(1);
    expect(m.run(["test", "-e", "/etc/systemd/system/genapi.service"]).code).toBe(1);
    expect(m.run(["systemctl", "is-enabled", "genapi"]).code).not.toBe(0);
    expect(m.run(["test", "-f", "/var/lib/private/genapi/genapi.db"]).code).toBe(0);
    expect(m.run(["cat", "/etc/genapi/genapi.env"]).stdout).toBe("GENAPI_FREE_DAILY_LIMIT=7\n");
  });
});

describe.skipIf(Boolean(skip))("every way out takes the container down", () => {
  test("a boot that does not finish fails, and its container is gone", async () => {
    const started = performance.now();
    let error: Error | undefined;
    await boot("genapi-test-hang.target", 8_000).then(
      (m) => m.shutdown(),
      (e) => (error = e),
    );
    // The oneshot never exits, so the boot stays where it was (initializing or starting).
    expect(error?.message).toMatch(/^the container's systemd did not finish booting: (initializing|starting)\n/);
    expect(performance.now() - started).toBeLessThan(60_000);
    expect(containers.length).toBeGreaterThanOrEqual(2);
  }, 90_000);

  test("after the file's tests no process of its containers remains", async () => {
    await shutdownAll();
    expect(containers.length).toBeGreaterThan(0);
    expect(leftovers()).toEqual([]);
  }, 30_000);
});
