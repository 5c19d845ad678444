// swagger-ui-dist depends on @scarf/scarf, whose install script reports each install to scarf.sh
// unless the root package opts out. The opt-out is checked by running that very script as npm runs
// it, with its own development switch (SCARF_LOCAL_PORT) pointing it at a loopback server of this
// test instead of scarf.sh: it must send nothing there and say that the user opted out.
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "../..");
const scarfDir = join(root, "node_modules/@scarf/scarf");

test.skipIf(!existsSync(scarfDir))(
  "@scarf/scarf's install script reports nothing: package.json opts out",
  async () => {
    const received: string[] = [];
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(request) {
        received.push(`${request.method} ${new URL(request.url).pathname} ${await request.text()}`);
        return new Response("ok");
      },
    });
    try {
      // The environment npm gives a postinstall script, less anything that opts out by itself.
      const proc = Bun.spawn(["node", "report.js"], {
        cwd: scarfDir,
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          HOME: process.env.HOME ?? "/root",
          INIT_CWD: root,
          SCARF_LOCAL_PORT: String(server.port),
          SCARF_VERBOSE: "true",
        },
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      expect(code).toBe(0);
      expect(received).toEqual([]);
      expect(`${stdout}\n${stderr}`).toMatch(/opted out|disabled/i);
    } finally {
      await server.stop(true);
    }
  },
  30_000,
);
