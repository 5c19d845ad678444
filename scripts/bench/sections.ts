// Every section of `npm run bench`, in the order run.ts runs them. A helper adding a section
// registers it here (and its place in the report in report.ts's ORDER); the type below makes
// the table list every section id results.ts declares, and the smoke test checks each one ran.
import { admissionBench } from "./admission.ts";
import type { Context } from "./context.ts";
import { crawlBench } from "./crawl.ts";
import { crawlCliBench } from "./crawl-cli.ts";
import { jobsBench } from "./jobs.ts";
import { passwordBench } from "./password.ts";
import { politenessBench } from "./politeness.ts";
import { quotaBench } from "./quota.ts";
import { renderBench } from "./render.ts";
import type { SectionResult } from "./results.ts";
import { startupBench } from "./startup.ts";

export const SECTIONS = {
  startup: startupBench,
  password: passwordBench,
  quota: quotaBench,
  admission: admissionBench,
  crawl: crawlBench,
  "crawl-cli": crawlCliBench,
  jobs: jobsBench,
  politeness: politenessBench,
  render: renderBench,
} satisfies Record<SectionResult["id"], (ctx: Context) => Promise<SectionResult>>;

export type SectionId = keyof typeof SECTIONS;
