// Every section of `npm run bench`, in the order run.ts runs them. A helper adding a section
// registers it here (and its place in the report in harness/report.ts's ORDER); the type below makes
// the table list every section id harness/results.ts declares, and the smoke test checks each one ran.
import { admissionBench } from "./sections/admission.ts";
import type { Context } from "./harness/context.ts";
import { crawlBench } from "./sections/crawl.ts";
import { crawlCliBench } from "./sections/crawl-cli.ts";
import { jobsBench } from "./sections/jobs.ts";
import { linkReportBench } from "./sections/link-report.ts";
import { sitesBench } from "./sections/sites.ts";
import { passwordBench } from "./sections/password.ts";
import { politenessBench } from "./sections/politeness.ts";
import { quotaBench } from "./sections/quota.ts";
import { renderBench } from "./sections/render.ts";
import type { SectionResult } from "./harness/results.ts";
import { startupBench } from "./sections/startup.ts";

export const SECTIONS = {
  startup: startupBench,
  password: passwordBench,
  quota: quotaBench,
  admission: admissionBench,
  crawl: crawlBench,
  "crawl-cli": crawlCliBench,
  jobs: jobsBench,
  sites: sitesBench,
  politeness: politenessBench,
  "link-report": linkReportBench,
  render: renderBench,
} satisfies Record<SectionResult["id"], (ctx: Context) => Promise<SectionResult>>;

export type SectionId = keyof typeof SECTIONS;
